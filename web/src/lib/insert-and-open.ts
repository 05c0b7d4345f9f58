import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { must } from './api';
import { supabase } from './supabase';

/**
 * A list page's "new" form: inserts the row over /rest/v1, refreshes the list (`listKey`) and opens
 * the new row's page at `<path>/<id>`. A refusal stays on the mutation for the form to show.
 */
export function useInsertAndOpen<F>(
  table: string,
  toRow: (form: F) => object,
  listKey: string,
  path: string,
) {
  const queries = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: async (form: F) =>
      must(await supabase.from(table).insert(toRow(form)).select('id').single()) as { id: string },
    onSuccess: async ({ id }) => {
      await queries.invalidateQueries({ queryKey: [listKey] });
      navigate(`${path}/${id}`);
    },
  });
}
