/**
 * The FOCUS 1.2 rules a FOCUS validator checks, written out from the specification (not from the
 * export's code), applied to every row of an export (JSON rows, or CSV rows with empty cells as null).
 */
import { expect } from 'vitest';

/** The 21 columns FOCUS 1.2 makes mandatory. */
export const FOCUS_12_MANDATORY = [
  'BilledCost', 'BillingAccountId', 'BillingAccountName', 'BillingCurrency', 'BillingPeriodEnd', 'BillingPeriodStart',
  'ChargeCategory', 'ChargeClass', 'ChargeDescription', 'ChargePeriodEnd', 'ChargePeriodStart', 'ContractedCost',
  'EffectiveCost', 'InvoiceIssuerName', 'ListCost', 'PricingQuantity', 'PricingUnit', 'ProviderName', 'PublisherName',
  'ServiceCategory', 'ServiceName',
];

/** Other FOCUS 1.2 column ids the export may carry; anything else must be a custom column (x_). */
const FOCUS_12_OTHER = [
  'AvailabilityZone', 'BillingAccountType', 'CapacityReservationId', 'CapacityReservationStatus', 'ChargeFrequency',
  'CommitmentDiscountCategory', 'CommitmentDiscountId', 'CommitmentDiscountName', 'CommitmentDiscountQuantity',
  'CommitmentDiscountStatus', 'CommitmentDiscountType', 'CommitmentDiscountUnit', 'ConsumedQuantity', 'ConsumedUnit',
  'ContractedUnitPrice', 'InvoiceId', 'ListUnitPrice', 'PricingCategory', 'PricingCurrency',
  'PricingCurrencyContractedUnitPrice', 'PricingCurrencyEffectiveCost', 'PricingCurrencyListUnitPrice', 'RegionId',
  'RegionName', 'ResourceId', 'ResourceName', 'ResourceType', 'ServiceSubcategory', 'SkuId', 'SkuMeter',
  'SkuPriceDetails', 'SkuPriceId', 'SubAccountId', 'SubAccountName', 'SubAccountType', 'Tags',
];

/** Mandatory columns that may be null (under conditions this export never meets, or always null: ChargeClass). */
const NULLABLE = new Set(['BillingAccountName', 'ChargeClass', 'ChargeDescription']);

const CHARGE_CATEGORIES = ['Usage', 'Purchase', 'Tax', 'Credit', 'Adjustment'];
const SERVICE_CATEGORIES = [
  'AI and Machine Learning', 'Analytics', 'Business Applications', 'Compute', 'Databases', 'Developer Tools', 'Multicloud',
  'Identity', 'Integration', 'Internet of Things', 'Management and Governance', 'Media', 'Migration', 'Mobile',
  'Networking', 'Security', 'Storage', 'Web', 'Other',
];
const CHARGE_FREQUENCIES = ['One-Time', 'Recurring', 'Usage-Based'];
/** ISO 4217 codes (the ones a cloud bills in; the check is the format plus membership). */
const ISO_4217 = new Set(['EUR', 'USD', 'GBP', 'JPY', 'CHF', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK', 'CAD', 'AUD', 'INR', 'CNY', 'BRL', 'KRW', 'SGD']);
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
/** FOCUS numeric format: optional minus, digits, optional fraction; no exponent, no separators. */
const DECIMAL = /^-?\d+(\.\d+)?$/;
const MONEY = ['BilledCost', 'ContractedCost', 'EffectiveCost', 'ListCost'];

function time(row: Record<string, unknown>, key: string, at: number): number {
  const text = String(row[key]);
  expect(text, `row ${at} ${key}`).toMatch(DATE_TIME);
  const ms = Date.parse(text);
  expect(Number.isNaN(ms), `row ${at} ${key} parses`).toBe(false);
  return ms;
}

export function checkFocusRows(rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): void {
  for (const c of FOCUS_12_MANDATORY) expect(columns, `column ${c}`).toContain(c);
  for (const c of columns) {
    if (!FOCUS_12_MANDATORY.includes(c) && !FOCUS_12_OTHER.includes(c)) expect(c, 'a custom column').toMatch(/^x_[A-Za-z0-9]+$/);
  }
  rows.forEach((row, at) => {
    for (const c of FOCUS_12_MANDATORY) {
      expect(Object.hasOwn(row, c), `row ${at} has ${c}`).toBe(true);
      if (!NULLABLE.has(c)) expect(row[c], `row ${at} ${c} is not null`).not.toBeNull();
    }
    expect(CHARGE_CATEGORIES, `row ${at} ChargeCategory`).toContain(row.ChargeCategory);
    expect(row.ChargeClass === null || row.ChargeClass === 'Correction', `row ${at} ChargeClass`).toBe(true);
    expect(SERVICE_CATEGORIES, `row ${at} ServiceCategory`).toContain(row.ServiceCategory);
    if ('ChargeFrequency' in row && row.ChargeFrequency !== null) expect(CHARGE_FREQUENCIES).toContain(row.ChargeFrequency);
    expect(ISO_4217.has(String(row.BillingCurrency)), `row ${at} BillingCurrency ${String(row.BillingCurrency)}`).toBe(true);
    for (const c of [...MONEY, 'PricingQuantity']) {
      expect(String(row[c]), `row ${at} ${c}`).toMatch(DECIMAL);
    }
    // List prices and no known discounts: every cost is the same amount.
    for (const c of MONEY) expect(Number(row[c]), `row ${at} ${c}`).toBe(Number(row.BilledCost));
    expect(Number(row.PricingQuantity), `row ${at} PricingQuantity`).toBeGreaterThan(0);
    expect(row.PricingUnit, `row ${at} PricingUnit`).toBe('Hours');
    for (const c of ['ProviderName', 'PublisherName', 'InvoiceIssuerName', 'BillingAccountId', 'ServiceName']) {
      expect(String(row[c]).trim().length, `row ${at} ${c}`).toBeGreaterThan(0);
    }
    const billingStart = time(row, 'BillingPeriodStart', at);
    const billingEnd = time(row, 'BillingPeriodEnd', at);
    const chargeStart = time(row, 'ChargePeriodStart', at);
    const chargeEnd = time(row, 'ChargePeriodEnd', at);
    expect(chargeStart, `row ${at} charge period start < end`).toBeLessThan(chargeEnd);
    expect(billingStart, `row ${at} billing period start < end`).toBeLessThan(billingEnd);
    // The billing period is the calendar month holding the charge (end exclusive).
    const start = new Date(billingStart);
    expect(start.getUTCDate() === 1 && start.getUTCHours() === 0 && start.getUTCMinutes() === 0 && start.getUTCSeconds() === 0, `row ${at} BillingPeriodStart is a month start`).toBe(true);
    expect(billingEnd, `row ${at} BillingPeriodEnd is the next month's start`).toBe(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    expect(chargeStart >= billingStart && chargeEnd <= billingEnd, `row ${at} billing period contains the charge period`).toBe(true);
  });
}
