// Typed search attributes of conversation workflows. Registered on the dev server at
// start (src/embedded/temporal.ts) and documented for production clusters (docs/deploy.md).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_STATUS = defineSearchAttributeKey('AgentrunStatus', SearchAttributeType.KEYWORD);
export const SA_WORKSPACE = defineSearchAttributeKey('AgentrunWorkspace', SearchAttributeType.KEYWORD);
export const SA_MODEL = defineSearchAttributeKey('AgentrunModel', SearchAttributeType.KEYWORD);
export const SA_TURNS = defineSearchAttributeKey('AgentrunTurns', SearchAttributeType.INT);
export const SA_COST = defineSearchAttributeKey('AgentrunCostUsd', SearchAttributeType.DOUBLE);
export const SA_SCHEDULE = defineSearchAttributeKey('AgentrunSchedule', SearchAttributeType.KEYWORD);
export const SA_TENANT = defineSearchAttributeKey('AgentrunTenant', SearchAttributeType.KEYWORD);

/** name → type for `temporal server start-dev --search-attribute NAME=TYPE` and operator registration. */
export const SEARCH_ATTRIBUTES: Record<string, 'Keyword' | 'Int' | 'Double'> = {
  AgentrunStatus: 'Keyword',
  AgentrunWorkspace: 'Keyword',
  AgentrunModel: 'Keyword',
  AgentrunTurns: 'Int',
  AgentrunCostUsd: 'Double',
  AgentrunSchedule: 'Keyword',
  AgentrunTenant: 'Keyword',
};
