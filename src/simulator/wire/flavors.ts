import type { GpuFlavorWire } from '../../cloud/schemas/responses.js';
import { decimalToNumber, HOURS_PER_MONTH, multiplyDecimal } from '../decimal.js';
import type { SimFlavor } from '../model.js';
import { oddRecord, type JsonObject, type WireContext } from './common.js';

export interface FlavorListFlags {
  includeDisabled: boolean;
  includeCapacity: boolean;
  includePrices: boolean;
}

/**
 * A GPU flavor. Capacity appears only with `include_capacity`, the price fields only with
 * `include_prices`; a hidden price reads `price_status: "hide"` with null prices.
 */
export function flavorWire(flavor: SimFlavor, flags: FlavorListFlags, ctx: WireContext): GpuFlavorWire | JsonObject {
  const record: GpuFlavorWire = {
    flavor_id: flavor.name,
    flavor_name: flavor.name,
    disabled: flavor.disabled,
    hardware_description: { ...flavor.hardware },
    resource_class: flavor.resourceClass,
  };
  if (flags.includeCapacity) record.capacity = flavor.capacity;
  if (flags.includePrices) {
    const hour = flavor.pricePerHour;
    record.currency_code = flavor.currency;
    record.price_per_hour = hour === null ? null : decimalToNumber(hour);
    record.price_per_month = hour === null ? null : decimalToNumber(multiplyDecimal(hour, HOURS_PER_MONTH));
    record.price_status = hour === null ? 'hide' : 'show';
  }
  if (!ctx.legacy) return record;
  // Legacy: prices, capacity and booleans as text on every other flavor; extra fields.
  const out: JsonObject = { ...record, architecture: null, os_type: null };
  if (oddRecord(flavor.name)) {
    out['disabled'] = String(flavor.disabled);
    if (record.capacity !== undefined) out['capacity'] = String(record.capacity);
    if (typeof record.price_per_hour === 'number') out['price_per_hour'] = String(record.price_per_hour);
    if (typeof record.price_per_month === 'number') out['price_per_month'] = String(record.price_per_month);
  }
  return out;
}
