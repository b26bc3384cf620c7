import {
  machineListEndpoints,
  type PolicyIssue,
  type PolicyView,
  policyEndpoints,
  type TestPolicyResponse,
} from '@letkite/protocol/api';
import { useEffect, useMemo, useState } from 'react';
import { call, can } from '../../api';
import { useApiMutation, useApiQuery } from '../../queries';
import { useSession } from '../../session';
import { ErrorNote, errorText, Field, Page, When } from '../../ui';
import { VisibleText } from '../../visible-value';
import { lineDiff } from './line-diff';
import { formFromParsed, type PolicyFormValues, tomlFromForm } from './policy-form';
import './policies.css';

const NEW_POLICY = `name = "new-policy"
shell = "off"
files = [ { path = "*", access = "ro" } ]

[commands]
default = "approve"
rules = []
`;

/**
 * The Policies page (issue #14): the account's policies, a TOML editor whose every problem is shown at its line
 * (checked by the gateway as you type), a form for the common keys, a diff between versions, and the rule tester,
 * which judges commands on a machine exactly as a real call would.
 */
export default function PoliciesPage() {
  const { session } = useSession();
  const manage = can(session.user, 'policies.manage');
  const list = useApiQuery(policyEndpoints.list);
  const [selected, setSelected] = useState<string | null>(null);
  const current = list.data?.policies.find((p) => p.name === selected) ?? null;
  return (
    <Page
      title="Policies"
      intro="What a connection or token may do. Choose a policy by name when connecting an AI client; an edit applies to its next call."
    >
      <ErrorNote error={errorText(list.error)} />
      <div className="policies-layout">
        <ul className="list policy-list" aria-label="Policies">
          {list.data?.policies.map((p) => (
            <li key={p.name}>
              <button
                type="button"
                className={p.name === selected ? 'link selected' : 'link'}
                data-testid={`policy-${p.name}`}
                onClick={() => setSelected(p.name)}
              >
                <VisibleText text={p.name} />
              </button>{' '}
              <span className="badge">{p.builtin ? 'built-in' : `v${p.version}`}</span>
            </li>
          ))}
          {manage && (
            <li>
              <button type="button" className="small" data-testid="policy-new" onClick={() => setSelected('')}>
                New policy
              </button>
            </li>
          )}
        </ul>
        {selected !== null && (
          <PolicyEditor
            key={`${selected}:${current?.version ?? 'new'}`}
            policy={current}
            manage={manage}
            onSaved={(name) => setSelected(name)}
            onDeleted={() => setSelected(null)}
          />
        )}
      </div>
    </Page>
  );
}

function PolicyEditor(props: {
  policy: PolicyView | null;
  manage: boolean;
  onSaved: (name: string) => void;
  onDeleted: () => void;
}) {
  const { policy } = props;
  const readOnly = !props.manage || (policy?.builtin ?? false);
  const [source, setSource] = useState(policy?.source ?? NEW_POLICY);
  const [issues, setIssues] = useState<PolicyIssue[]>([]);
  const [parsed, setParsed] = useState<Record<string, unknown> | null>(policy?.parsed ?? null);
  const create = useApiMutation(policyEndpoints.create, { invalidates: [policyEndpoints.list, policyEndpoints.show] });
  const update = useApiMutation(policyEndpoints.update, { invalidates: [policyEndpoints.list, policyEndpoints.show] });
  const remove = useApiMutation(policyEndpoints.remove, { invalidates: [policyEndpoints.list, policyEndpoints.show] });

  // Checked by the gateway a moment after the last keystroke: the same parser a save uses.
  useEffect(() => {
    if (!props.manage) return;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      call(policyEndpoints.validate, { source }, controller.signal)
        .then((r) => {
          setIssues(r.issues);
          if (r.parsed) setParsed(r.parsed);
        })
        .catch(() => {});
    }, 300);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [source, props.manage]);

  const save = () => {
    const done = { onSuccess: (r: { policy: PolicyView }) => props.onSaved(r.policy.name) };
    if (policy && !policy.builtin) update.mutate({ name: policy.name, source, version: policy.version }, done);
    else create.mutate({ source }, done);
  };
  const badLines = new Set(issues.map((i) => i.line).filter((l): l is number => l !== undefined));
  const lineCount = source.split('\n').length;
  return (
    <section className="card policy-editor" aria-label="Policy editor">
      <header>
        <h2>{policy ? <VisibleText text={policy.name} /> : 'New policy'}</h2>
        {policy && !policy.builtin && (
          <span className="hint">
            version {policy.version} by {policy.author} · <When at={policy.at} />
          </span>
        )}
        {policy?.builtin && (
          <span className="hint">Built-in: read-only. Save a copy under a new name to change it.</span>
        )}
      </header>
      <div className="toml-editor">
        <pre className="gutter" aria-hidden="true">
          {Array.from({ length: lineCount }, (_, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a gutter line is its number
            <span key={i} className={badLines.has(i + 1) ? 'bad' : ''}>
              {i + 1}
              {'\n'}
            </span>
          ))}
        </pre>
        <textarea
          name="policy-source"
          data-testid="policy-source"
          aria-label="Policy TOML"
          spellCheck={false}
          rows={Math.max(12, Math.min(lineCount + 1, 40))}
          value={source}
          readOnly={readOnly && !policy?.builtin}
          onChange={(e) => setSource(e.target.value)}
        />
      </div>
      {issues.length > 0 ? (
        <ul className="issues" aria-label="Problems">
          {issues.map((i) => (
            <li key={`${i.line}:${i.path}:${i.message}`} data-testid="policy-issue">
              {i.line !== undefined && <strong>line {i.line}</strong>} {i.path && <code>{i.path}</code>} {i.message}
            </li>
          ))}
        </ul>
      ) : (
        props.manage && (
          <p className="hint" data-testid="policy-valid">
            No problems.
          </p>
        )
      )}
      {props.manage && (
        <div className="actions">
          <button
            type="button"
            className="primary"
            data-testid="policy-save"
            disabled={issues.length > 0 || create.isPending || update.isPending}
            onClick={save}
          >
            {policy && !policy.builtin ? 'Save new version' : 'Create policy'}
          </button>
          {policy && !policy.builtin && (
            <button
              type="button"
              className="danger"
              data-testid="policy-delete"
              onClick={() => remove.mutate({ name: policy.name }, { onSuccess: props.onDeleted })}
            >
              Delete
            </button>
          )}
        </div>
      )}
      <ErrorNote error={errorText(update.error ?? create.error ?? remove.error)} />
      {props.manage && parsed && <PolicyForm parsed={parsed} onWrite={(toml) => setSource(toml)} />}
      {policy && !policy.builtin && <Versions name={policy.name} current={policy.version} />}
      {props.manage && <RuleTester source={source} />}
    </section>
  );
}

function PolicyForm(props: { parsed: Record<string, unknown>; onWrite: (toml: string) => void }) {
  const initial = useMemo(() => formFromParsed(props.parsed), [props.parsed]);
  const [v, setV] = useState<PolicyFormValues>(initial);
  // Reset only when what the form would show changes: every check of the source answers a new (often equal)
  // parsed policy, and an equal one must not wipe the choices someone is making in the form.
  const initialKey = JSON.stringify(initial);
  useEffect(() => setV(JSON.parse(initialKey) as PolicyFormValues), [initialKey]);
  const set = <K extends keyof PolicyFormValues>(k: K, value: PolicyFormValues[K]) => setV({ ...v, [k]: value });
  const text = (k: keyof PolicyFormValues, label: string, hint: string) => (
    <Field label={label} hint={hint}>
      <textarea name={`form-${k}`} rows={3} value={v[k]} onChange={(e) => set(k, e.target.value as never)} />
    </Field>
  );
  // `name` keeps the form fields' names (`form-default` for commandDefault) that tests and autofill rely on.
  const choice = (k: keyof PolicyFormValues, name: string, label: string, options: string[]) => (
    <Field label={label}>
      <select name={`form-${name}`} value={v[k]} onChange={(e) => set(k, e.target.value as never)}>
        {options.map((x) => (
          <option key={x} value={x}>
            {x}
          </option>
        ))}
      </select>
    </Field>
  );
  return (
    <details className="policy-form">
      <summary>Common keys as a form</summary>
      <div className="form-grid">
        {choice('shell', 'shell', 'Shell', ['off', 'sandboxed', 'full'])}
        {choice('gui', 'gui', 'Screen (gui)', ['off', 'observe', 'act'])}
        {choice('commandDefault', 'default', 'Commands: when no rule matches', ['allow', 'confirm', 'approve', 'deny'])}
        {choice('approvers', 'approvers', 'Approvers', ['connector', 'any_admin', 'four_eyes'])}
        {text('files', 'Files', 'one "path access" per line, e.g. /srv rw')}
        {text('deny', 'Deny', 'one path pattern per line')}
        {text('tunnelTargets', 'Tunnel targets', 'one host:port per line')}
        {text('rulesets', 'Rule sets', 'linux-readonly, windows-readonly, no-destructive, deploy')}
        {text('rules', 'Rules', 'one "verdict pattern" per line, e.g. approve git push *')}
        {text('approvalTools', 'Tools that always need a human', 'one tool per line, e.g. write_file')}
        <Field label="Approval timeout" hint="1m .. 24h">
          <input name="form-timeout" value={v.timeout} onChange={(e) => set('timeout', e.target.value)} />
        </Field>
      </div>
      <button
        type="button"
        className="small"
        data-testid="form-write"
        onClick={() => props.onWrite(tomlFromForm({ ...v, name: String(props.parsed.name ?? v.name) }, props.parsed))}
      >
        Write to the TOML (replaces its comments)
      </button>
    </details>
  );
}

function Versions(props: { name: string; current: number }) {
  const shown = useApiQuery(policyEndpoints.show, { name: props.name });
  const versions = shown.data?.versions ?? [];
  const [from, setFrom] = useState(Math.max(1, props.current - 1));
  const [to, setTo] = useState(props.current);
  const a = versions.find((x) => x.version === from)?.source ?? '';
  const b = versions.find((x) => x.version === to)?.source ?? '';
  // Until both revisions are loaded (a save refetches the list) there is nothing honest to compare.
  const diff = a && b ? lineDiff(a, b) : [];
  const pick = (value: number, onChange: (n: number) => void, label: string) => (
    <select aria-label={label} name={label} value={value} onChange={(e) => onChange(Number(e.target.value))}>
      {versions.map((x) => (
        <option key={x.version} value={x.version}>
          v{x.version} · {x.author}
        </option>
      ))}
    </select>
  );
  return (
    <details className="versions" open={versions.length > 1}>
      <summary>Versions and changes</summary>
      {shown.data && shown.data.used_by.length > 0 && (
        <p className="hint">
          Used by{' '}
          {shown.data.used_by
            .map((u) => `${u.kind === 'api_token' ? 'token' : 'connection'} "${u.label}" of ${u.user_name}`)
            .join(', ')}
        </p>
      )}
      <p>
        Compare {pick(from, setFrom, 'diff-from')} with {pick(to, setTo, 'diff-to')}
      </p>
      <pre className="diff" data-testid="policy-diff">
        {diff.map((l, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: diff lines have no identity but their position
          <span key={i} className={l.kind}>
            {l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}
            {l.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </details>
  );
}

function RuleTester(props: { source: string }) {
  const machines = useApiQuery(machineListEndpoints.list);
  const [machine, setMachine] = useState('');
  const [commands, setCommands] = useState('');
  const [result, setResult] = useState<TestPolicyResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setError(null);
    try {
      const list = commands.split('\n').filter((c) => c.trim() !== '');
      setResult(
        await call(policyEndpoints.test, {
          source: props.source,
          commands: list,
          ...(machine ? { machine } : {}),
        }),
      );
    } catch (e) {
      setResult(null);
      setError(errorText(e));
    }
  };
  return (
    <section className="rule-tester" aria-label="Rule tester">
      <h3>Rule tester</h3>
      <p className="hint">Judges the text above as it stands, on a machine, exactly as a real call would be.</p>
      <div className="form-grid">
        <Field label="Machine">
          <select name="tester-machine" value={machine} onChange={(e) => setMachine(e.target.value)}>
            <option value="">No machine (no ceiling)</option>
            {machines.data?.machines.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Commands" hint="one per line">
          <textarea name="tester-commands" rows={3} value={commands} onChange={(e) => setCommands(e.target.value)} />
        </Field>
      </div>
      <button type="button" className="small" data-testid="tester-run" onClick={run}>
        Test
      </button>
      <ErrorNote error={error} />
      {result && (
        <ul className="list tester-results">
          {result.machine && (
            <li className="hint">
              On <VisibleText text={result.machine.name} />: ceiling {result.machine.ceiling}
              {result.machine.ceiling_error ? ` (${result.machine.ceiling_error})` : ''}
            </li>
          )}
          {result.results.map((r) => (
            <li key={r.command} data-testid="tester-result" data-verdict={r.verdict}>
              <span>
                <code>
                  <VisibleText text={r.command} />
                </code>{' '}
                <span className={`badge verdict-${r.verdict}`}>{r.verdict}</span>
                {r.approval_tool && <span className="badge">exec always needs a human</span>}
              </span>
              <ul>
                {r.reasons.map((reason, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: reasons are shown in the order given
                  <li key={i}>
                    {reason.verdict} · {reason.layer}
                    {reason.rule ? ` · rule "${reason.rule}"` : ''}: {reason.message}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
