import { bodyExamples } from '../../core/openapi/api-body-examples.js';
import { CreateGroupDto } from './dto/group.dto.js';
import { PoliciesInputDto } from './dto/policy.dto.js';
import { RoleCreateDto, RoleUpdateDto } from './dto/role.dto.js';
import { UserCreateDto, UserUpdateDto } from './dto/user.dto.js';
import { ApiKeyCreateDto, type ApiKeyCreatedDto } from './dto/api-key.dto.js';

export const CREATE_USER_EXAMPLES = bodyExamples(UserCreateDto, {
  developer: {
    summary: 'A developer, with console settings',
    value: {
      email: 'ann.lee@example.com',
      username: 'ann.lee',
      firstName: 'Ann',
      title: 'Analytics engineer',
      defaultRoles: ['Developer'],
      settings: { timezone: 'Europe/Berlin', theme: 'dark' },
    },
  },
  viewer: {
    summary: 'A viewer: reads dashboards and reports, changes nothing',
    value: { email: 'sam.ortiz@example.com', username: 'sam.ortiz', defaultRoles: ['AIBIViewer'] },
  },
});

export const UPDATE_USER_EXAMPLES = bodyExamples(UserUpdateDto, {
  roles: { summary: 'Change the built-in roles', value: { defaultRoles: ['AIBIUser'], isAdmin: false } },
  deactivate: { summary: 'Deactivate (their tokens stop working)', value: { isDeactivated: true } },
});

export const POLICIES_EXAMPLES = bodyExamples(PoliciesInputDto, {
  deployment: {
    summary: 'Read one deployment, edit one folder',
    value: {
      policies: [
        { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['12'] },
        { resourceType: 'Folder', actions: ['FolderEdit'], resources: ['7'] },
      ],
    },
  },
  none: { summary: 'Remove every direct grant', value: { policies: [] } },
});

export const CREATE_ROLE_EXAMPLES = bodyExamples(RoleCreateDto, {
  maintainers: {
    summary: 'Read every deployment, update one',
    value: {
      name: 'Deployment 12 maintainers',
      policies: [
        { resourceType: 'Global', actions: ['DeploymentRead'], resources: ['All'] },
        { resourceType: 'Deployment', actions: ['DeploymentUpdate'], resources: ['12'] },
      ],
    },
  },
});

export const UPDATE_ROLE_EXAMPLES = bodyExamples(RoleUpdateDto, {
  rename: { summary: 'Rename, keeping the policies', value: { name: 'Deployment 12 owners' } },
  policies: {
    summary: 'Replace the policies',
    value: {
      policies: [{ resourceType: 'Global', actions: ['ReportRead', 'WorkbookRead'], resources: ['All'] }],
    },
  },
});

export const CREATE_GROUP_EXAMPLES = bodyExamples(CreateGroupDto, {
  finance: {
    summary: 'A group mirrored from the identity provider',
    value: { name: 'Finance', description: 'Finance analysts', externalId: '00g1emaa7sVbX3oL5d7' },
  },
});

export const CREATE_API_KEY_EXAMPLES = bodyExamples(ApiKeyCreateDto, {
  ci: { summary: 'A key for a CI pipeline, never expiring', value: { name: 'CI pipeline' } },
  expiring: {
    summary: 'A key that stops working at a set time',
    value: { name: 'Quarterly export', expiresAt: '2030-01-01T00:00:00.000Z' },
  },
});

/** What `POST /api/v1/api-keys` answers: the secret, shown this once. */
export const API_KEY_CREATED_EXAMPLE: ApiKeyCreatedDto = {
  id: 42,
  name: 'CI pipeline',
  prefix: 'pat_EXAMPLE-',
  userId: 7,
  createdAt: '2026-11-27T09:30:00.000Z',
  lastUsedAt: null,
  expiresAt: null,
  token: 'pat_EXAMPLE-not-a-real-key-EXAMPLE-not-a-real-k',
};
