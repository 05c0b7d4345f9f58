/** A list filter: one of `options`, or all of them (the empty value) under `allLabel`. */
export function FilterSelect({
  label,
  value,
  allLabel,
  options,
  labelOf = (o) => o,
  onChange,
}: {
  label: string;
  value: string;
  allLabel: string;
  options: readonly string[];
  labelOf?: (option: string) => string;
  onChange(value: string): void;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{allLabel}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {labelOf(o)}
          </option>
        ))}
      </select>
    </label>
  );
}
