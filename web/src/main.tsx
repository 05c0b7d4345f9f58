import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { SessionProvider } from './lib/session';
import { router } from './routes';
import './styles.css';

const queries = new QueryClient({
  defaultOptions: {
    // A person acting on an error's message wants it at once, not after three silent retries.
    queries: { retry: 1, staleTime: 10_000, refetchOnWindowFocus: true },
  },
});

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queries}>
        <SessionProvider>
          <RouterProvider router={router} />
        </SessionProvider>
      </QueryClientProvider>
    </StrictMode>,
  );
}
