/**
 * Content another module keeps per owner (folders, workbooks, reports) that outlives a deleted
 * user. A module that owns such content provides an implementation; the users module calls every
 * one of them inside the unit of work that deletes the user, without importing those modules.
 */
export abstract class OwnedContent {
  /** Passes everything `fromUserId` owns in the account to `toUserId`. */
  abstract handOver(accountId: number, fromUserId: number, toUserId: number): Promise<void>;
}
