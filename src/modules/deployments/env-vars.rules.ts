/** The rules of deployment environment variables: names, secrets, limits. No framework here. */

export const ENV_VAR_NAME_MAX_LENGTH = 128;
/** Characters of one value (a PEM certificate or a JSON key file fits). */
export const ENV_VAR_VALUE_MAX_LENGTH = 32_768;
export const ENV_VARS_PER_REQUEST = 100;
export const ENV_VARS_PER_DEPLOYMENT = 500;

/** What a secret-named variable reads back as; refused as a value. */
export const ENCRYPTED_PLACEHOLDER = '[ENCRYPTED]';

/** The names new variables must have (POSIX identifiers). */
export const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const SECRET_NAME = /PASS|SECRET|TOKEN|KEY|CREDENTIAL/i;

/** Whether the variable's value is masked on reads. */
export const isSecretName = (name: string): boolean => SECRET_NAME.test(name);

/**
 * What a variable's value is sealed for: its account, deployment and name. A sealed value copied
 * to another row (another name, deployment or account) does not open.
 */
export const envVarContext = (accountId: number, deploymentId: number, name: string): string =>
  `deployment-env-var:${JSON.stringify([accountId, deploymentId, name])}`;
