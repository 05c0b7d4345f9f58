import { useForm } from 'react-hook-form';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field, Select, TextArea } from '../../ui/Field';
import { type Account, accountLabel } from './post';
import { timeZone } from './time';

/** What the form edits; files and URLs are new media (they replace any the post has). */
export type PostInput = {
  account_id: string;
  message: string;
  link: string;
  media_urls: string;
  files: FileList | null;
  publish_at: string;
};

export type Intent = 'draft' | 'schedule';

/**
 * Create and edit share this form. Two ways to save: as a draft, or scheduled at the local time
 * typed. On an error the typed values (the chosen files included) stay as they are.
 */
export function PostForm({
  initial,
  accounts,
  editing,
  scheduled,
  pending,
  error,
  onSubmit,
}: {
  initial: PostInput;
  accounts: Account[];
  /** An existing post: its account cannot change (the service keeps it). */
  editing?: boolean;
  /** An existing scheduled post: saving keeps it scheduled. */
  scheduled?: boolean;
  pending: boolean;
  error: unknown;
  onSubmit(values: PostInput, intent: Intent): void;
}) {
  const { register, handleSubmit } = useForm<PostInput>({ defaultValues: initial });
  const submit = (intent: Intent) => handleSubmit((v) => onSubmit(v, intent));
  return (
    <form className="grid-form post-form" onSubmit={submit(scheduled ? 'schedule' : 'draft')}>
      <Select label="Account" disabled={editing} {...register('account_id')}>
        {accounts.map((a) => (
          <option key={a.id} value={a.id}>
            {accountLabel(a)}
          </option>
        ))}
      </Select>
      <TextArea label="Text" rows={4} {...register('message')} />
      <Field label="Link" type="url" placeholder="https://…" {...register('link')} />
      <Field
        label="Images or videos"
        type="file"
        multiple
        accept="image/jpeg,image/png,image/gif,image/webp,video/mp4,video/quicktime"
        hint={editing ? 'New media replace the current ones' : 'JPEG, PNG, GIF, WebP up to 10 MB; MP4 or MOV'}
        {...register('files')}
      />
      <TextArea
        label="Media URLs"
        rows={2}
        hint="One https address per line; the service downloads them"
        {...register('media_urls')}
      />
      <Field
        label="Publish at"
        type="datetime-local"
        hint={`Your time (${timeZone()}); needed to schedule`}
        {...register('publish_at')}
      />
      <ErrorNote error={error} />
      <div className="form-actions actions">
        {!scheduled && (
          <button type="submit" disabled={pending}>
            Save draft
          </button>
        )}
        <button type="button" className="primary" disabled={pending} onClick={submit('schedule')}>
          {scheduled ? 'Save changes' : 'Schedule'}
        </button>
      </div>
    </form>
  );
}
