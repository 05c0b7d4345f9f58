import { ApiError, messageOf } from '../lib/api';

type Issue = { path: string; message: string };

/**
 * An error in the service's own words, announced to screen readers. A validation error also lists
 * the fields it refused (`details.issues`): "The request is invalid" alone does not tell a person
 * what to fix. `labels` names those fields as the form does (a map, or a function for paths like
 * `items.1.quantity`).
 */
export function ErrorNote({
  error,
  labels = {},
}: {
  error: unknown;
  labels?: Record<string, string> | ((path: string) => string);
}) {
  if (!error) return null;
  const issues =
    error instanceof ApiError && Array.isArray(error.details?.issues)
      ? (error.details.issues as Issue[])
      : [];
  const label = (path: string) => (typeof labels === 'function' ? labels(path) : (labels[path] ?? path));
  const message = messageOf(error);
  // One refused field: its labelled line says it all, without the same sentence above it.
  const alone = issues.length === 1 && issues[0]?.message === message;
  return (
    <div className="error" role="alert">
      {!alone && <p>{message}</p>}
      {issues.length > 0 && (
        <ul>
          {issues.map((i) => (
            <li key={`${i.path}:${i.message}`}>
              {i.path ? `${label(i.path)}: ` : ''}
              {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
