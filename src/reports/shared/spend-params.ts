/**
 * The parameters shared by the reports of spend over a period grouped one way (cost, monthly):
 * the grouping, the period, and the priced kind / project / region filter.
 */
import { z } from 'zod';
import { PRICED_KINDS } from '../../costing/pricing.js';
import { groupingParam } from './costs.js';
import { idParam } from './params.js';
import { periodParamShape } from './period.js';

export const groupedSpendParamShape = {
  by: groupingParam('tag:team'),
  ...periodParamShape,
  kind: z.enum(PRICED_KINDS, { error: `kind must be one of ${PRICED_KINDS.join(', ')}` }).optional(),
  project: idParam('project'),
  region: idParam('region'),
};
