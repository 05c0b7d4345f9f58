/** Placeholder for an area whose pages are not built yet. */
export const Pending = ({ area }: { area: string }) => <p>{area} is not built yet.</p>;
