import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { PostForm } from './PostForm';
import { socialAccounts } from './post';
import { toForm, useSavePost } from './save';
import './social.css';

export function NewPostPage() {
  const accounts = useQuery({ queryKey: ['social', 'accounts'], queryFn: socialAccounts });
  const save = useSavePost(accounts.data ?? []);
  return (
    <Page title="New post" actions={<Link to="/app/social">Back to the calendar</Link>}>
      <ErrorNote error={accounts.error} />
      {accounts.isPending ? (
        <Loading />
      ) : accounts.data?.length === 0 ? (
        <p className="empty">
          No Facebook Page or Instagram account is connected. An owner or admin connects one in{' '}
          <Link to="/app/accounts">Connected accounts</Link>.
        </p>
      ) : (
        accounts.data && (
          <section className="panel" aria-label="Post">
            <PostForm
              initial={toForm(undefined, accounts.data[0]?.id)}
              accounts={accounts.data}
              pending={save.isPending}
              error={save.error}
              onSubmit={(values, intent) => save.mutate({ values, intent })}
            />
          </section>
        )
      )}
    </Page>
  );
}
