/** The account and provider names of the FOCUS export. */
import { z } from 'zod';
import type { FocusSettings } from './types.js';
import { nonEmptyName } from './validators.js';

export const DEFAULT_FOCUS_PROVIDER_NAME = 'Cloud provider';
export const DEFAULT_FOCUS_BILLING_ACCOUNT_ID = 'default';

export const FocusSchema = z.strictObject({
  billing_account_id: nonEmptyName.optional(),
  billing_account_name: nonEmptyName.optional(),
  provider_name: nonEmptyName.optional(),
  publisher_name: nonEmptyName.optional(),
  invoice_issuer_name: nonEmptyName.optional(),
});

export function focusSettings(raw: z.output<typeof FocusSchema>): FocusSettings {
  const providerName = raw.provider_name ?? DEFAULT_FOCUS_PROVIDER_NAME;
  const billingAccountId = raw.billing_account_id ?? DEFAULT_FOCUS_BILLING_ACCOUNT_ID;
  return {
    billingAccountId,
    billingAccountName: raw.billing_account_name ?? billingAccountId,
    providerName,
    publisherName: raw.publisher_name ?? providerName,
    invoiceIssuerName: raw.invoice_issuer_name ?? providerName,
  };
}
