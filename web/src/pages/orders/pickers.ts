import { useQuery } from '@tanstack/react-query';
import { must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import type { OrderContact } from './order';

// What the create form picks from: contacts by a search, inventory items by name or SKU. Each
// asks for one short page; the search narrows it (a select is not the place for a pager).
const PICK = 20;
const term = (s: string) => s.replace(/[,()*\\]/g, ' ').trim();

export function useContactChoices(search: string) {
  return useQuery({
    queryKey: ['order-form', 'contacts', search],
    queryFn: async () => {
      let q = supabase.from('contacts').select('id, first_name, last_name, email, phone');
      const t = term(search);
      if (t)
        q = q.or(['first_name', 'last_name', 'email', 'phone'].map((c) => `${c}.ilike.*${t}*`).join(','));
      return must(await q.order('created_at', { ascending: false }).limit(PICK)) as OrderContact[];
    },
  });
}

export type ItemChoice = {
  id: string;
  name: string;
  sku: string | null;
  unit_price: number;
  currency: string;
};

export function useItemChoices(search: string) {
  return useQuery({
    queryKey: ['order-form', 'items', search],
    queryFn: async () => {
      let q = supabase
        .from('inventory_items')
        .select('id, name, sku, unit_price, currency')
        .neq('status', 'archived');
      const t = term(search);
      if (t) q = q.or(`name.ilike.*${t}*,sku.ilike.*${t}*`);
      return must(await q.order('name').limit(PICK)) as ItemChoice[];
    },
  });
}
