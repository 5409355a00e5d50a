/**
 * Shuffle sharding (upstream's util/shufflesharding): a flow's hash deals it a hand of `handSize`
 * distinct queues out of `deckSize`, so two flows share all of their queues only rarely and an
 * elephant flow crowds out few mice. The hash is FNV-1a 64 of the flow schema's name and the flow
 * distinguisher, each followed by a zero byte (upstream's hashFlowID).
 */

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;

export function hashFlowId(flowSchema: string, distinguisher: string): bigint {
  let hash = FNV_OFFSET;
  for (const part of [flowSchema, distinguisher]) {
    for (const byte of Buffer.from(part, 'utf8')) {
      hash ^= BigInt(byte);
      hash = (hash * FNV_PRIME) & MASK64;
    }
    hash = (hash * FNV_PRIME) & MASK64; // the zero byte after each part (0 ^ anything is a no-op)
  }
  return hash;
}

/**
 * Upstream's Dealer.Deal: the hash is read as a mixed-radix number whose i-th digit (base deckSize - i)
 * picks the i-th card among the cards not yet dealt.
 */
export function dealHand(hash: bigint, deckSize: number, handSize: number): number[] {
  const hand: number[] = [];
  let remainder = hash;
  const size = Math.min(handSize, deckSize);
  for (let i = 0; i < size; i++) {
    const base = BigInt(deckSize - i);
    let card = Number(remainder % base);
    remainder /= base;
    // Map the index among the remaining cards to the card itself: skip the ones dealt (ascending).
    for (const taken of [...hand].sort((a, b) => a - b)) if (card >= taken) card++;
    hand.push(card);
  }
  return hand;
}
