import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { invoke } from '../../lib/api';
import { ErrorNote } from '../../ui/ErrorNote';
import { Select } from '../../ui/Field';
import { fetchPlans, usd } from './usage';

/** Owners move their organization to another plan (no billing is integrated: the change is immediate). */
export function PlanPicker({ organizationId, current }: { organizationId: string; current: string }) {
  const queries = useQueryClient();
  const plans = useQuery({ queryKey: ['plans'], queryFn: fetchPlans, staleTime: Number.POSITIVE_INFINITY });
  const [choice, setChoice] = useState(current);
  const change = useMutation({
    mutationFn: (plan: string) =>
      invoke<{ organization: { plan: string } }>('organization-plan', {
        body: { organization_id: organizationId, plan },
      }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['usage'] }),
  });
  const name = (slug: string) => plans.data?.find((p) => p.slug === slug)?.name ?? slug;
  return (
    <form
      className="filters"
      onSubmit={(e) => {
        e.preventDefault();
        change.mutate(choice);
      }}
    >
      <Select label="Plan to move to" value={choice} onChange={(e) => setChoice(e.target.value)}>
        {(plans.data ?? []).map((p) => (
          <option key={p.slug} value={p.slug}>
            {p.name} ({usd(p.price_usd)} a month)
          </option>
        ))}
      </Select>
      <button type="submit" disabled={change.isPending || choice === current}>
        Change plan
      </button>
      <ErrorNote error={change.error ?? plans.error} />
      {change.isSuccess && (
        <p role="status">Your organization is now on the {name(change.data.organization.plan)} plan.</p>
      )}
    </form>
  );
}
