import { bodyExamples } from '../../core/openapi/api-body-examples.js';
import { CreateDeploymentDto, UpdateDeploymentDto } from './dto/deployment.dto.js';
import { SetEnvVariablesDto } from './dto/env-vars.dto.js';

export const CREATE_DEPLOYMENT_EXAMPLES = bodyExamples(CreateDeploymentDto, {
  managed: {
    summary: 'A managed deployment on AWS, data model kept in Git',
    value: {
      name: 'Sales analytics',
      cloudProvider: 'aws',
      isManaged: true,
      region: 'aws-us-east-1',
      targetPlatform: 'cubecloud',
      creationStep: 'project',
      creationMethod: 'cubecloud',
      deployMode: 'git',
    },
  },
});

export const UPDATE_DEPLOYMENT_EXAMPLES = bodyExamples(UpdateDeploymentDto, {
  rename: { summary: 'Rename', value: { name: 'Sales analytics (EMEA)' } },
  releaseChannel: {
    summary: 'Move to the release channel, holding its head, and merge template variables',
    value: {
      releaseChannel: 'release',
      releaseChannelVersionHold: true,
      templateVariables: { CUBEJS_DB_QUERY_TIMEOUT: '10m', CUBEJS_LOG_LEVEL: null },
    },
  },
});

export const SET_ENV_VARIABLES_EXAMPLES = bodyExamples(SetEnvVariablesDto, {
  upsert: {
    summary: 'Set two variables and remove a third',
    value: {
      env_variables: [
        { name: 'CUBEJS_DB_HOST', value: 'db.internal' },
        { name: 'CUBEJS_DB_PASS', value: 'correct horse battery staple' },
        { name: 'CUBEJS_LOG_LEVEL', value: null },
      ],
    },
  },
});
