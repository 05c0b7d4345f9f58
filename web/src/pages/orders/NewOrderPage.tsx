import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useFieldArray, useForm } from 'react-hook-form';
import { useNavigate } from 'react-router';
import { invoke } from '../../lib/api';
import { personName } from '../../lib/format';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field, Select, TextArea } from '../../ui/Field';
import { Page } from '../../ui/Page';
import { labelOf } from './field-labels';
import { emptyLine, LineFields, type OrderForm } from './LineFields';
import type { Order } from './order';
import { useContactChoices } from './pickers';
import './orders.css';

type Created = { order_number: string; order: Order; warnings: { code: string; message: string }[] };

const text = (s: string) => s.trim() || undefined;

/** The body of POST /functions/v1/orders (svc_create_order's input, spec 2.3). */
function toBody(f: OrderForm) {
  return {
    contact_id: text(f.contact_id),
    customer_name: f.contact_id ? undefined : text(f.customer_name),
    customer_email: f.contact_id ? undefined : text(f.customer_email),
    fulfillment: f.fulfillment,
    // A pickup has no address or courier phone.
    address: f.fulfillment === 'delivery' ? f.address : undefined,
    phone_number: f.fulfillment === 'delivery' ? f.phone_number : undefined,
    currency: text(f.currency),
    notes: text(f.notes),
    items: f.lines.map((l) => ({
      item_id: text(l.item_id),
      name: l.name,
      sku: text(l.sku),
      quantity: Number(l.quantity),
      unit_price: l.unit_price.trim() === '' ? undefined : Number(l.unit_price),
    })),
  };
}

/**
 * A new order through the service's own create-order workflow, so lines are matched to inventory
 * as agents' orders are. On an error nothing typed is lost; on success the order's page shows how
 * each line was matched.
 */
export function NewOrderPage() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [contactSearch, setContactSearch] = useState('');
  const contacts = useContactChoices(contactSearch);
  const { register, handleSubmit, control, watch, getValues, setValue } = useForm<OrderForm>({
    defaultValues: {
      fulfillment: 'delivery',
      contact_id: '',
      customer_name: '',
      customer_email: '',
      address: '',
      phone_number: '',
      currency: 'USD',
      notes: '',
      lines: [emptyLine()],
    },
  });
  const lines = useFieldArray({ control, name: 'lines' });
  const create = useMutation({
    mutationFn: (f: OrderForm) => invoke<Created>('orders', { body: toBody(f) }),
    onSuccess: async ({ order, warnings }) => {
      await queries.invalidateQueries({ queryKey: ['orders'] });
      await queries.invalidateQueries({ queryKey: ['inventory'] });
      navigate(`/app/orders/${order.id}`, { state: { warnings } });
    },
  });
  const pickedContact = watch('contact_id');

  return (
    <Page title="New order">
      {/* The service checks the input and names each field it refuses (ErrorNote lists them): no second set of rules here. */}
      <form noValidate onSubmit={handleSubmit((f) => create.mutate(f))}>
        <section className="panel" aria-labelledby="new-order-customer">
          <h2 id="new-order-customer">Customer</h2>
          <div className="grid-form">
            <Field
              label="Find a contact"
              type="search"
              value={contactSearch}
              onChange={(e) => setContactSearch(e.target.value)}
            />
            <Select label="Contact" {...register('contact_id')}>
              <option value="">No contact: use the customer below</option>
              {contacts.data?.map((c) => (
                <option key={c.id} value={c.id}>
                  {personName(c)}
                  {c.email && c.first_name ? ` <${c.email}>` : ''}
                </option>
              ))}
            </Select>
            {!pickedContact && (
              <>
                <Field
                  label="Customer name"
                  hint="A new contact unless the email matches one"
                  {...register('customer_name')}
                />
                <Field label="Customer email" type="email" {...register('customer_email')} />
              </>
            )}
          </div>
          <ErrorNote error={contacts.error} />
        </section>
        <section className="panel" aria-labelledby="new-order-shipping">
          <h2 id="new-order-shipping">Shipping</h2>
          <div className="grid-form">
            <Select label="Delivered or picked up" {...register('fulfillment')}>
              <option value="delivery">Delivered to the customer</option>
              <option value="pickup">Picked up by the customer</option>
            </Select>
            {watch('fulfillment') === 'delivery' && (
              <>
                <TextArea label="Shipping address" rows={3} {...register('address')} />
                <Field
                  label="Shipping phone"
                  type="tel"
                  hint="For the courier; from abroad with its country code"
                  {...register('phone_number')}
                />
              </>
            )}
            <Field label="Currency" maxLength={3} {...register('currency')} />
            <TextArea label="Notes" rows={2} {...register('notes')} />
          </div>
        </section>
        <section className="panel" aria-labelledby="new-order-lines">
          <h2 id="new-order-lines">Lines</h2>
          {lines.fields.map((field, i) => (
            <LineFields
              key={field.id}
              index={i}
              register={register}
              onPick={(item) => {
                if (!item) return;
                if (!getValues(`lines.${i}.name`).trim()) setValue(`lines.${i}.name`, item.name);
                if (!getValues(`lines.${i}.sku`).trim() && item.sku) setValue(`lines.${i}.sku`, item.sku);
              }}
              onRemove={lines.fields.length > 1 ? () => lines.remove(i) : undefined}
            />
          ))}
          <button type="button" onClick={() => lines.append(emptyLine())}>
            Add a line
          </button>
        </section>
        <ErrorNote error={create.error} labels={labelOf} />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Create order
          </button>
        </div>
      </form>
    </Page>
  );
}
