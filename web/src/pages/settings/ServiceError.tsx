import { ApiError, messageOf } from '../../lib/api';

type Issue = { path: string; message: string };

/**
 * ErrorNote plus a validation error's `details.issues`: "The request is invalid" alone does not
 * tell a person which field to fix. `labels` names fields as the form does. (A candidate for ui/.)
 */
export function ServiceError({ error, labels = {} }: { error: unknown; labels?: Record<string, string> }) {
  if (!error) return null;
  const issues =
    error instanceof ApiError && Array.isArray(error.details?.issues)
      ? (error.details.issues as Issue[])
      : [];
  return (
    <div className="error" role="alert">
      <p>{messageOf(error)}</p>
      {issues.length > 0 && (
        <ul>
          {issues.map((i) => (
            <li key={`${i.path}:${i.message}`}>
              {i.path ? `${labels[i.path] ?? i.path}: ` : ''}
              {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
