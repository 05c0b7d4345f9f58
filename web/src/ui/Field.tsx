import { type ComponentProps, forwardRef, useId } from 'react';

type FieldProps = ComponentProps<'input'> & { label: string; hint?: string; error?: string };

/** A labelled input; `error` is shown beneath it and tied to it for screen readers. */
export const Field = forwardRef<HTMLInputElement, FieldProps>(function Field(
  { label, hint, error, ...input },
  ref,
) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        ref={ref}
        aria-invalid={error ? true : undefined}
        aria-describedby={error || hint ? `${id}-note` : undefined}
        {...input}
      />
      {(error || hint) && (
        <small id={`${id}-note`} className={error ? 'error' : 'hint'}>
          {error ?? hint}
        </small>
      )}
    </div>
  );
});

type SelectProps = ComponentProps<'select'> & { label: string };

export const Select = forwardRef<HTMLSelectElement, SelectProps>(function Select({ label, ...select }, ref) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} ref={ref} {...select} />
    </div>
  );
});

type TextAreaProps = ComponentProps<'textarea'> & { label: string; hint?: string };

export const TextArea = forwardRef<HTMLTextAreaElement, TextAreaProps>(function TextArea(
  { label, hint, ...area },
  ref,
) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} ref={ref} aria-describedby={hint ? `${id}-note` : undefined} {...area} />
      {hint && (
        <small id={`${id}-note`} className="hint">
          {hint}
        </small>
      )}
    </div>
  );
});
