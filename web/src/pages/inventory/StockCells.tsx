import { type Item, STATUS_LABELS, stockOf } from './item';

/** The status badges of an item: its status, review-waiting drafts, low stock. */
export function ItemBadges({ item }: { item: Item }) {
  const { low } = stockOf(item);
  return (
    <>
      <span className={item.status === 'draft' ? 'badge draft' : 'badge'}>{STATUS_LABELS[item.status]}</span>{' '}
      {item.auto_created && item.status === 'draft' && <span className="badge draft">Needs review</span>}{' '}
      {low && item.status !== 'archived' && <span className="badge warn">Low stock</span>}
    </>
  );
}

/** On hand, reserved, available, backordered: what the stock is and what it is promised to. */
export function StockFigures({ item }: { item: Item }) {
  const { available, backordered } = stockOf(item);
  return (
    <dl className="totals">
      <dt>On hand</dt>
      <dd>{item.quantity_on_hand}</dd>
      <dt>Reserved</dt>
      <dd>{item.quantity_reserved}</dd>
      <dt>Available</dt>
      <dd>{available}</dd>
      <dt>Backordered</dt>
      <dd>{backordered}</dd>
      <dt>Reorder point</dt>
      <dd>{item.reorder_point}</dd>
    </dl>
  );
}
