import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { ApiError } from './api';

/** Loads data for a page; `reload` after a change. */
export function useLoad<T>(load: () => Promise<T>): { data: T | null; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: reloads on `tick`; `load` is a fresh closure each render
  useEffect(() => {
    let live = true;
    load()
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(null);
      })
      .catch((e: unknown) => {
        if (live) setError(messageOf(e));
      });
    return () => {
      live = false;
    };
  }, [tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []) };
}

export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error && e.name === 'NotAllowedError') return 'The passkey prompt was cancelled or not verified.';
  return e instanceof Error ? e.message : String(e);
}

/** The message to show for a query's or mutation's error, or null when there is none. */
export function errorText(e: unknown): string | null {
  return e === null || e === undefined ? null : messageOf(e);
}

/** Runs an action, tracking busy state and the error to show. */
export function useAction(): {
  busy: boolean;
  error: string | null;
  run: (fn: () => Promise<void>) => Promise<void>;
  setError: (e: string | null) => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

export function ErrorNote(props: { error: string | null }) {
  if (!props.error) return null;
  return (
    <p className="error" role="alert">
      {props.error}
    </p>
  );
}

export function Field(props: { label: string; hint?: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is passed in as a child
    <label className="field">
      <span className="label">{props.label}</span>
      {props.children}
      {props.hint && <span className="hint">{props.hint}</span>}
    </label>
  );
}

export function Page(props: { title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <>
      <h1>{props.title}</h1>
      {props.intro && <p className="intro">{props.intro}</p>}
      {props.children}
    </>
  );
}

export function When(props: { at: string | null; never?: string }) {
  if (!props.at) return <>{props.never ?? '—'}</>;
  const d = new Date(props.at);
  return <time dateTime={props.at}>{d.toLocaleString()}</time>;
}

/** A secret shown once, with a copy button. */
export function Secret(props: { label: string; value: string; testId?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret">
      <span className="label">{props.label}</span>
      <code data-testid={props.testId}>{props.value}</code>
      <button
        type="button"
        className="small"
        onClick={async () => {
          await navigator.clipboard?.writeText(props.value).catch(() => {});
          setCopied(true);
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
