import { useForm } from 'react-hook-form';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field, TextArea } from '../../ui/Field';
import type { Conversation } from './inbox';
import { useSend } from './useSend';

type TemplateInput = { name: string; language: string; parameters: string };

/**
 * A WhatsApp template as whatsapp-send-message takes it: `{name, language, components}`. The
 * service keeps no list of the business's approved templates (they live in Meta's WhatsApp
 * Manager), so the name is typed; the body's {{1}}, {{2}}… parameters are one per line.
 */
export function TemplateForm({ conversation }: { conversation: Pick<Conversation, 'id' | 'channel'> }) {
  const send = useSend(conversation);
  const { register, handleSubmit, reset, formState } = useForm<TemplateInput>({
    defaultValues: { name: '', language: 'en_US', parameters: '' },
  });
  const submit = handleSubmit((f) => {
    const parameters = f.parameters
      .split('\n')
      .map((p) => p.trim())
      .filter(Boolean);
    const template = {
      name: f.name.trim(),
      language: f.language.trim(),
      ...(parameters.length
        ? { components: [{ type: 'body', parameters: parameters.map((text) => ({ type: 'text', text })) }] }
        : {}),
    };
    send.mutate({ template }, { onSuccess: () => reset() });
  });
  return (
    <form className="grid-form template-form" onSubmit={submit} aria-label="Template message">
      <Field
        label="Template name"
        hint="As approved in WhatsApp Manager, e.g. order_update"
        error={formState.errors.name?.message}
        {...register('name', {
          required: 'Give the template’s name',
          validate: (v) => !!v.trim() || 'Give the template’s name',
        })}
      />
      <Field
        label="Language"
        hint="The template’s language code, e.g. en_US"
        error={formState.errors.language?.message}
        {...register('language', {
          required: 'Give the language code',
          minLength: { value: 2, message: 'Give the language code' },
        })}
      />
      <TextArea
        label="Parameters"
        rows={3}
        hint="One per line, in order: {{1}}, {{2}}, … of the template’s body"
        {...register('parameters')}
      />
      <ErrorNote error={send.error} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={send.isPending}>
          {send.isPending ? 'Sending…' : 'Send template'}
        </button>
      </div>
    </form>
  );
}
