import { bodyExamples } from '../../core/openapi/api-body-examples.js';
import { ScimUserDto } from './dto/scim.dto.js';
import { URN } from './scim.schema.js';

type ScimUserInput = Omit<ScimUserDto, 'id' | 'meta' | 'groups'>;

export const CREATE_SCIM_USER_EXAMPLES = bodyExamples<ScimUserInput>(ScimUserDto, {
  okta: {
    summary: 'A user as Okta or Microsoft Entra sends it',
    value: {
      schemas: [URN.user],
      userName: 'jo.park@example.com',
      externalId: '00u1emaa7sVbX3oL5d8',
      name: { givenName: 'Jo', familyName: 'Park' },
      displayName: 'Jo Park',
      title: 'Finance analyst',
      active: true,
      emails: [{ value: 'jo.park@example.com', type: 'work', primary: true }],
    },
  },
});
