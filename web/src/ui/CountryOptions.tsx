import { countries } from '../lib/countries';

/** The options of an organization's country: unset, then every country by its name. */
export function CountryOptions() {
  return (
    <>
      <option value="">Not set: phone numbers need their country code</option>
      {countries().map((c) => (
        <option key={c.code} value={c.code}>
          {c.name}
        </option>
      ))}
    </>
  );
}
