import type { ReactNode } from 'react';

export function AuthLayout({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth">
      <div className="card">
        <p className="brand">svc</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
