import { visibleParts } from './visible-text';

/** Text with every control and invisible character shown as a highlighted symbol. */
export function VisibleText(props: { text: string }) {
  return (
    <>
      {visibleParts(props.text).map((p, i) =>
        p.special ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts are positional and never reordered
          <mark key={i} className="invisible-char" title="an invisible or control character">
            {p.text}
          </mark>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts are positional and never reordered
          <span key={i}>{p.text}</span>
        ),
      )}
    </>
  );
}

/** One argument value: strings verbatim (made visible), lists item by item, anything else as JSON. */
export function VisibleValue(props: { value: unknown }) {
  const { value } = props;
  if (typeof value === 'string') {
    return (
      <pre className="arg-value">
        <VisibleText text={value} />
      </pre>
    );
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return (
      <ol className="arg-list">
        {value.map((v, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: argv positions are the identity of its items
          <li key={i}>
            <pre className="arg-value">
              <VisibleText text={v} />
            </pre>
          </li>
        ))}
      </ol>
    );
  }
  return (
    <pre className="arg-value">
      <VisibleText text={JSON.stringify(value, null, 2)} />
    </pre>
  );
}
