import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import { CountryOptions } from '../../ui/CountryOptions';
import { ErrorNote } from '../../ui/ErrorNote';
import { Select } from '../../ui/Field';

/**
 * The organization's country (owners and admins): phone numbers typed without a country code are
 * read as this country's. Asked when the organization was created; changed here.
 */
export function OrganizationCountry({ organizationId }: { organizationId: string }) {
  const queries = useQueryClient();
  const current = useQuery({
    queryKey: ['org-country', organizationId],
    queryFn: async () =>
      (
        must(await supabase.from('organizations').select('country').eq('id', organizationId).single()) as {
          country: string | null;
        }
      ).country ?? '',
  });
  const [chosen, setChosen] = useState('');
  useEffect(() => setChosen(current.data ?? ''), [current.data]);
  const save = useMutation({
    mutationFn: async () =>
      must(
        await supabase
          .from('organizations')
          .update({ country: chosen || null })
          .eq('id', organizationId)
          .select('country')
          .single(),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['org-country', organizationId] }),
  });
  return (
    <section className="panel" aria-labelledby="country-heading">
      <h2 id="country-heading">Country</h2>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Select label="Organization’s country" value={chosen} onChange={(e) => setChosen(e.target.value)}>
          <CountryOptions />
        </Select>
        <button type="submit" disabled={save.isPending || current.isPending}>
          Save country
        </button>
      </form>
      <p className="hint">Phone numbers typed without a country code are read as this country’s.</p>
      {save.isSuccess && <p role="status">Saved.</p>}
      <ErrorNote error={save.error ?? current.error} />
    </section>
  );
}
