import type { ReactNode } from 'react';

/** A page's heading, its actions beside it, and its content. */
export function Page({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section className="page">
      <header className="page-header">
        <h1>{title}</h1>
        {actions && <div className="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export const Loading = () => (
  <p className="loading" aria-live="polite">
    Loading…
  </p>
);
