import { auditTarget } from '../../src/core/audit/audit-target.js';

describe('auditTarget', () => {
  it.each([
    ['/api/v1/users', 'createUser', {}, 7, { type: 'users', id: '7' }],
    ['/api/v1/users/:id', 'updateUser', { id: '7' }, 7, { type: 'users', id: '7' }],
    ['/api/v1/users/bulk', 'bulkUserAction', {}, undefined, { type: 'users', id: null }],
    ['/build/api/v1/deployments', 'createDeployment', {}, 3, { type: 'deployments', id: '3' }],
    [
      '/api/v1/deployments/:deploymentId/folders',
      'createFolder',
      { deploymentId: '3' },
      11,
      { type: 'folders', id: '11' },
    ],
    [
      '/api/v1/deployments/:deploymentId/reports/:reportId/connect',
      'connectReport',
      { deploymentId: '3', reportId: '5' },
      5,
      { type: 'reports', id: '5' },
    ],
    [
      '/api/v1/deployments/:deploymentId/workbooks/:workbookId/copy',
      'copyWorkbook',
      { deploymentId: '3', workbookId: '8' },
      9,
      { type: 'workbooks', id: '8' },
    ],
    [
      '/api/v1/roles/:roleId/groups/:groupId',
      'assignRoleToGroup',
      { roleId: '1', groupId: '2' },
      undefined,
      { type: 'groups', id: '2' },
    ],
    [
      '/api/v1/embed-tenants/:embedTenantName',
      'deleteEmbedTenant',
      { embedTenantName: 'acme' },
      undefined,
      { type: 'embed-tenants', id: 'acme' },
    ],
    ['/api/scim/v2/Users/:id', 'patchScimUser', { id: '4' }, '4', { type: 'Users', id: '4' }],
    ['/api/v1/tenant/settings', 'updateTenantSettings', {}, undefined, { type: 'tenant', id: null }],
  ])('%s (%s)', (template, operationId, params, responseId, expected) => {
    expect(auditTarget(template, operationId, params, responseId)).toEqual(expected);
  });

  it('does not take a created id when the create answers without one', () => {
    expect(auditTarget('/api/v1/groups', 'createUserGroup', {}, undefined)).toEqual({
      type: 'groups',
      id: null,
    });
  });

  it('cuts ids to the column length', () => {
    const long = 'x'.repeat(300);
    expect(
      auditTarget('/api/v1/embed-tenants/:name', 'deleteEmbedTenant', { name: long }, undefined).id,
    ).toHaveLength(255);
  });
});
