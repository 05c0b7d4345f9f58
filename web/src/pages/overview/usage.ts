import { invoke, must } from '../../lib/api';
import { supabase } from '../../lib/supabase';

export type Counter = {
  used: number;
  limit: number | null;
  remaining: number | null;
  percent: number | null;
  period: 'total' | 'month' | 'day';
};

/** agent-usage's answer (spec: `agent-usage` response), for owners and admins. */
export type Usage = {
  plan: { slug: string; name: string; price_usd: number };
  usage: Record<string, Counter>;
  warnings: { resource: string; used: number; limit: number; percent: number; message: string }[];
  upgrade: { recommended_plan: string; reason: string } | null;
  retention: { days: number; message: string };
  generated_at: string;
};

export type Plan = { slug: string; name: string; price_usd: string | number; rank: number };

export const fetchUsage = () => invoke<Usage>('agent-usage');

/** Every plan, cheapest first (the plans table is readable by anyone). */
export const fetchPlans = async () =>
  must(await supabase.from('plans').select('slug, name, price_usd, rank').order('rank')) as Plan[];

/** The organization's plan slug over /rest/v1, for members (agent-usage is for owners and admins). */
export const fetchOrgPlan = async (organizationId: string) =>
  (
    must(await supabase.from('organizations').select('plan').eq('id', organizationId).single()) as {
      plan: string;
    }
  ).plan;

export const usd = (n: string | number) =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 0 }).format(
    Number(n),
  );
