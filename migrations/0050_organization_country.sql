-- The organization's country (issue 30 §2): phone numbers typed in national form ("415 555 0102")
-- are read as numbers of this country and stored in E.164 (src/domain/phone.ts). ISO 3166-1
-- alpha-2, upper case. Null for organizations made before it was asked, and for those whose
-- owner did not say: then only international numbers (with + or 00 and the country code) are
-- understood, as before. Owners and admins change it like the name (organizations_update policy).
alter table public.organizations
  add column country text constraint organizations_country_check check (country ~ '^[A-Z]{2}$');

grant update (country) on public.organizations to authenticated;
