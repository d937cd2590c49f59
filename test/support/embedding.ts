/** The embed-tenants routes' prefix. */
export const TENANTS = '/api/v1/embed-tenants';

/** The EmbedUser shape the embedding routes answer with. */
export interface EmbedUser {
  id: number;
  username: string;
  createdAt: string;
  email: string;
  externalId: string;
  firstName: string | null;
  lastLogin: string | null;
}
