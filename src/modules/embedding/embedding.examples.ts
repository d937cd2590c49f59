import { bodyExamples } from '../../core/openapi/api-body-examples.js';
import {
  GenerateSessionDto,
  PostTokenBySessionIdDto,
  RevokeEmbedSessionDto,
} from './dto/embed-session.dto.js';
import { ProvisionEmbedUserDto, ProvisionEmbedUsersDto } from './dto/embed-user.dto.js';

const ANN = {
  externalId: 'u-1042',
  email: 'ann@acme.example',
  groups: ['analysts'],
  tenantGroups: ['finance'],
  userProfile: { displayName: 'Ann Lee' },
};

export const PROVISION_EMBED_USER_EXAMPLES = bodyExamples(ProvisionEmbedUserDto, {
  full: { summary: 'Create or update a user with groups and a profile', value: ANN },
  minimal: { summary: 'Only the external id', value: { externalId: 'u-1043' } },
});

export const PROVISION_EMBED_USERS_EXAMPLES = bodyExamples(ProvisionEmbedUsersDto, {
  two: {
    summary: 'Two users in one request',
    value: { users: [ANN, { externalId: 'u-1043', email: 'bo@acme.example', tenantGroups: [] }] },
  },
});

export const GENERATE_SESSION_EXAMPLES = bodyExamples(GenerateSessionDto, {
  viewer: {
    summary: 'A viewer of one dashboard, with a row-level security context',
    value: {
      deploymentId: 12,
      embedTenantName: 'acme-co',
      externalId: 'u-1042',
      email: 'ann@acme.example',
      groups: ['analysts'],
      publicDashboardId: 'Db7kQ2mXw9Lp',
      securityContext: { region: 'emea' },
      settings: { locale: 'en-GB', timezone: 'Europe/London', showDashboardChat: false },
    },
  },
  creator: {
    summary: 'A creator who shares content in a tenant group',
    value: {
      deploymentId: 12,
      embedTenantName: 'acme-co',
      externalId: 'u-1042',
      creatorMode: true,
      tenantGroupDefinitions: [{ name: 'finance', description: 'Finance team' }],
      tenantGroups: ['finance'],
      embedTenantProfile: { displayName: 'Acme Co' },
      userAttributes: [{ name: 'country', value: 'DE' }],
    },
  },
});

export const POST_TOKEN_EXAMPLES = bodyExamples(PostTokenBySessionIdDto, {
  exchange: {
    summary: 'Exchange a session id for an embed token',
    value: { sessionId: '4f9c2a7e1b3d4c5e8f9a0b1c2d3e4f5a' },
  },
});

export const REVOKE_SESSION_EXAMPLES = bodyExamples(RevokeEmbedSessionDto, {
  revoke: {
    summary: 'Revoke a session and its token',
    value: { sessionId: '4f9c2a7e1b3d4c5e8f9a0b1c2d3e4f5a' },
  },
});
