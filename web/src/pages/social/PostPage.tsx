import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { PostDetails } from './PostDetails';
import { PostForm } from './PostForm';
import { deletePost, editable, readPost, socialAccounts, updatePost } from './post';
import { toForm, useSavePost } from './save';
import './social.css';

/** One post: what it is and where it stands, and the moves its state allows. */
export function PostPage() {
  const { id = '' } = useParams();
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const navigate = useNavigate();
  const queries = useQueryClient();
  const post = useQuery({ queryKey: ['social', 'post', id], queryFn: () => readPost(id) });
  const accounts = useQuery({ queryKey: ['social', 'accounts'], queryFn: socialAccounts });
  const save = useSavePost(accounts.data ?? [], post.data ?? undefined);
  // A refused move (the post moved on meanwhile) shows why, and the post as it is now.
  const settle = () => queries.invalidateQueries({ queryKey: ['social'] });
  const cancel = useMutation({ mutationFn: () => updatePost(id, { cancel: true }), onSettled: settle });
  const remove = useMutation({
    mutationFn: () => deletePost(id),
    // Nothing is refetched while this page is still up: it would ask for the files just
    // removed. The calendar refetches what is stale as it opens.
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['social'], refetchType: 'none' });
      navigate('/app/social');
    },
    onError: settle,
  });

  if (post.isPending) return <Loading />;
  const p = post.data;
  if (!p)
    return (
      <Page title="Post">
        <ErrorNote error={post.error} />
        {!post.error && <p className="empty">There is no such post in this organization.</p>}
        <Link to="/app/social">Back to the calendar</Link>
      </Page>
    );
  const canChange = editable(p);
  const busy = cancel.isPending || remove.isPending;
  return (
    <Page
      title={p.status === 'draft' ? 'Draft post' : 'Post'}
      actions={
        <>
          <Link to="/app/social">Back to the calendar</Link>
          {canChange && (
            <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
              Edit
            </button>
          )}
          {p.status === 'scheduled' && (
            <button type="button" disabled={busy} onClick={() => cancel.mutate()}>
              Cancel schedule
            </button>
          )}
          {canChange && (
            <button type="button" className="danger" disabled={busy} onClick={() => setConfirming(true)}>
              Delete
            </button>
          )}
        </>
      }
    >
      <ErrorNote error={cancel.error ?? remove.error} />
      {confirming && canChange && (
        <section className="panel confirm" aria-label="Delete this post">
          <p>Delete this post and its media? This cannot be undone.</p>
          <div className="actions">
            <button type="button" className="danger" disabled={busy} onClick={() => remove.mutate()}>
              Delete post
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </div>
        </section>
      )}
      {editing && canChange && accounts.data && (
        <section className="panel" aria-label="Edit post">
          <PostForm
            initial={toForm(p)}
            accounts={accounts.data}
            editing
            scheduled={p.status === 'scheduled'}
            pending={save.isPending}
            error={save.error}
            onSubmit={(values, intent) =>
              save.mutate({ values, intent }, { onSuccess: () => setEditing(false) })
            }
          />
        </section>
      )}
      {!canChange && (
        <p className="hint">
          A {p.status} post can no longer be changed or deleted; only drafts and scheduled posts can.
        </p>
      )}
      <PostDetails post={p} accounts={accounts.data ?? []} />
    </Page>
  );
}
