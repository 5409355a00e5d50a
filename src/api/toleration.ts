/** A pod's toleration of a node taint (core/v1 Toleration), as the scheduler, the agent and admission read it. */
export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}
