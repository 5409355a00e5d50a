/**
 * Shapes of metav1 and core/v1 pieces that several components read (controllers, the agent), and
 * the pure rules that go with them, declared once.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The fields of a toleration and a taint that matching reads. */
export interface TolerationLike {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export interface TaintLike {
  key: string;
  value?: string;
  effect: string;
}

/** Upstream's Toleration.ToleratesTaint. */
export function toleratesTaint(toleration: TolerationLike, taint: TaintLike): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}
