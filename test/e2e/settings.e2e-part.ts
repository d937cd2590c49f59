import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';

const SETTINGS = '/api/v1/tenant/settings';
const APP_CONFIG = '/api/v1/app-config';

const DEFAULT_SETTINGS = {
  auditLogEnabled: false,
  auditLogEnabledCurrent: false,
  auditLogEnabledTimestamp: 0,
  hasSupportAccess: false,
  useAIBIUserInterface: false,
  maintenanceWindowEnabled: false,
  maintenanceWindowDay: 'sunday',
  maintenanceWindowTime: '02:00',
  oidcEnabled: false,
  pythonAnalysisEnabled: false,
};

const DEFAULT_APP_CONFIG = {
  appTheme: null,
  applyThemeGlobally: false,
  creatorMode: null,
  embedding: null,
  restrictDataDownload: false,
  sheetsAgentChatEnabled: false,
  sheetsUi: null,
  timezoneSettings: null,
};

/** An app config using every field, nested ones included. */
const FULL_APP_CONFIG = {
  appTheme: {
    palette: {
      accent: { color: '#1f6feb', hue: 212.5, saturation: 80 },
      base: { color: null, hue: 0, saturation: 10 },
      contrastLevel: 55.5,
      pastel: false,
      surfaceMode: 'tinted',
      themes: {
        code: { saturation: 40 },
        danger: { color: 'rgb(200, 30, 30)' },
        note: null,
        success: { hue: 120 },
        warning: { saturation: 90 },
      },
    },
    logoUrl: 'https://cdn.acme.test/logo.svg',
    light: {
      accentColor: '#1f6feb',
      backgroundColor: '#ffffff',
      foregroundColor: '#111111',
      contrast: 50,
      logoUrl: 'https://cdn.acme.test/logo-light.svg',
    },
    typography: {
      fonts: [{ id: 'inter', url: 'https://cdn.acme.test/inter.woff2', format: 'woff2', family: 'Inter' }],
      body: { fontRef: 'inter', fontWeight: 400 },
      heading: { fontRef: 'inter', fontWeight: 700 },
    },
  },
  applyThemeGlobally: true,
  creatorMode: {
    localizedTitles: [
      { locale: 'en-US', value: 'Analytics' },
      { locale: 'de', value: 'Analysen' },
    ],
    showGeneratedSql: true,
    showSemanticSql: false,
    showWorkspaceTitle: true,
    workspaceTitle: 'Acme analytics',
  },
  embedding: {
    allowAi: true,
    enableDashboardComments: false,
    locale: 'fr-FR',
    showAiWidgets: true,
    showDashboardChat: false,
    showWorkbookChat: true,
    timezone: 'Europe/Paris',
  },
  restrictDataDownload: true,
  sheetsAgentChatEnabled: true,
  sheetsUi: { showAppliedFilters: true },
  timezoneSettings: { allowUserOverride: false, enabled: true, timezone: 'America/New_York' },
};

describe('tenant settings and app config', () => {
  let t: TestApp;
  let viewer: Actor;
  let noRole: Actor;
  let other: Actor;

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    noRole = await newUser(t, t.admin, { defaultRoles: [] });
    other = await newAccount(t, 'globex');
  });
  afterAll(() => t.close());

  const getSettings = (actor: Actor = t.admin) => t.http().get(SETTINGS).set(bearer(actor.token));
  const putSettings = (body: unknown, actor: Actor = t.admin) =>
    t
      .http()
      .put(SETTINGS)
      .set(bearer(actor.token))
      .send(body as object);
  const getConfig = (actor: Actor = t.admin) => t.http().get(APP_CONFIG).set(bearer(actor.token));
  const putConfig = (body: unknown, actor: Actor = t.admin) =>
    t
      .http()
      .put(APP_CONFIG)
      .set(bearer(actor.token))
      .send(body as object);
  const rowOf = async (accountId: number) =>
    (await t.sql(`SELECT * FROM tenant_settings WHERE account_id = $1`, [accountId]))[0];

  /** An account of its own, so a test starts from the defaults (no row). */
  let accounts = 0;
  const freshAccount = () => newAccount(t, `fresh-${++accounts}`);

  describe('GET /api/v1/tenant/settings', () => {
    it('answers 401 without a token', async () => {
      const res = await t.http().get(SETTINGS);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('answers 403 to users who are not admins', async () => {
      for (const actor of [viewer, noRole]) {
        const res = await getSettings(actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
    });

    it('returns the defaults for an account that never saved settings, without writing a row', async () => {
      const account = await freshAccount();
      const res = await getSettings(account);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(DEFAULT_SETTINGS);
      expect(await rowOf(account.accountId)).toBeUndefined();
    });
  });

  describe('PUT /api/v1/tenant/settings', () => {
    it('answers 401 without a token and 403 to non-admins, changing nothing', async () => {
      const account = t.admin;
      const before = (await getSettings()).body;
      const anon = await t.http().put(SETTINGS).send({ oidcEnabled: !before.oidcEnabled });
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await putSettings({ oidcEnabled: !before.oidcEnabled }, viewer);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect((await getSettings(account)).body).toEqual(before);
    });

    it('merges: omitted and null fields keep their value', async () => {
      const account = await freshAccount();
      const first = await putSettings(
        { maintenanceWindowEnabled: true, maintenanceWindowDay: 'monday', maintenanceWindowTime: '23:59' },
        account,
      );
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        ...DEFAULT_SETTINGS,
        maintenanceWindowEnabled: true,
        maintenanceWindowDay: 'monday',
        maintenanceWindowTime: '23:59',
      });
      const second = await putSettings(
        { oidcEnabled: true, maintenanceWindowDay: null, hasSupportAccess: null, useAIBIUserInterface: true },
        account,
      );
      expect(second.status).toBe(200);
      expect(second.body).toEqual({
        ...DEFAULT_SETTINGS,
        maintenanceWindowEnabled: true,
        maintenanceWindowDay: 'monday',
        maintenanceWindowTime: '23:59',
        oidcEnabled: true,
        useAIBIUserInterface: true,
      });
      expect((await getSettings(account)).body).toEqual(second.body);
      expect(await rowOf(account.accountId)).toMatchObject({
        maintenance_window_enabled: true,
        maintenance_window_day: 'monday',
        maintenance_window_time: '23:59',
        oidc_enabled: true,
        use_aibi_user_interface: true,
        has_support_access: false,
      });
    });

    it('accepts an empty body and changes nothing', async () => {
      const account = await freshAccount();
      const res = await putSettings({}, account);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(DEFAULT_SETTINGS);
      expect(await rowOf(account.accountId)).toBeUndefined();
    });

    it('stamps the moment the audit log is switched on, and keeps it when switched off', async () => {
      const account = await freshAccount();
      const before = Date.now();
      const on = await putSettings({ auditLogEnabled: true }, account);
      const after = Date.now();
      expect(on.status).toBe(200);
      expect(on.body).toMatchObject({ auditLogEnabled: true, auditLogEnabledCurrent: true });
      const stamp = on.body.auditLogEnabledTimestamp as number;
      expect(Number.isInteger(stamp)).toBe(true);
      expect(stamp).toBeGreaterThanOrEqual(before - 1000);
      expect(stamp).toBeLessThanOrEqual(after + 1000);
      const row = await rowOf(account.accountId);
      expect(row.audit_log_enabled).toBe(true);
      expect((row.audit_log_enabled_at as Date).getTime()).toBe(stamp);

      // Saying "on" again is not a switch: the moment stays.
      await new Promise((r) => setTimeout(r, 20));
      const again = await putSettings({ auditLogEnabled: true, oidcEnabled: true }, account);
      expect(again.body.auditLogEnabledTimestamp).toBe(stamp);

      const off = await putSettings({ auditLogEnabled: false }, account);
      expect(off.status).toBe(200);
      expect(off.body).toMatchObject({
        auditLogEnabled: false,
        auditLogEnabledCurrent: false,
        auditLogEnabledTimestamp: stamp,
      });
      expect((await rowOf(account.accountId)).audit_log_enabled).toBe(false);

      await new Promise((r) => setTimeout(r, 20));
      const onAgain = await putSettings({ auditLogEnabled: true }, account);
      expect(onAgain.body.auditLogEnabledTimestamp).toBeGreaterThan(stamp);
    });

    it('keeps the timestamp at 0 when the audit log is saved as off', async () => {
      const account = await freshAccount();
      const res = await putSettings({ auditLogEnabled: false }, account);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ auditLogEnabled: false, auditLogEnabledTimestamp: 0 });
      expect((await rowOf(account.accountId)).audit_log_enabled_at).toBeNull();
    });

    it('refuses bad input with 400 naming the field, changing nothing', async () => {
      const account = await freshAccount();
      await putSettings({ maintenanceWindowDay: 'friday' }, account);
      const cases: Array<[unknown, string]> = [
        [{ maintenanceWindowDay: 'funday' }, 'maintenanceWindowDay'],
        [{ maintenanceWindowDay: 'Monday' }, 'maintenanceWindowDay'],
        [{ maintenanceWindowTime: '24:00' }, 'maintenanceWindowTime'],
        [{ maintenanceWindowTime: '2:00' }, 'maintenanceWindowTime'],
        [{ maintenanceWindowTime: '02:00:00' }, 'maintenanceWindowTime'],
        [{ maintenanceWindowTime: '12:60' }, 'maintenanceWindowTime'],
        [{ maintenanceWindowTime: 200 }, 'maintenanceWindowTime'],
        [{ auditLogEnabled: 'yes' }, 'auditLogEnabled'],
        [{ oidcEnabled: 1 }, 'oidcEnabled'],
        [{ hasSupportAccess: 'true' }, 'hasSupportAccess'],
        [{ auditLogEnabledTimestamp: 5 }, 'auditLogEnabledTimestamp'],
        [{ theme: 'dark' }, 'theme'],
        [[{ oidcEnabled: true }], 'body'],
      ];
      for (const [body, field] of cases) {
        const res = await putSettings(body, account);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
      expect((await getSettings(account)).body).toEqual({
        ...DEFAULT_SETTINGS,
        maintenanceWindowDay: 'friday',
      });
    });

    it('keeps accounts apart', async () => {
      const res = await putSettings({ hasSupportAccess: true, maintenanceWindowDay: 'tuesday' });
      expect(res.status).toBe(200);
      const theirs = await getSettings(other);
      expect(theirs.body).toMatchObject({ hasSupportAccess: false, maintenanceWindowDay: 'sunday' });
      expect((await getSettings()).body).toMatchObject({
        hasSupportAccess: true,
        maintenanceWindowDay: 'tuesday',
      });
    });

    it('loses nothing when different fields are saved in parallel, from no row at all', async () => {
      const account = await freshAccount();
      const bodies = [
        { auditLogEnabled: true },
        { hasSupportAccess: true },
        { useAIBIUserInterface: true },
        { maintenanceWindowEnabled: true },
        { maintenanceWindowDay: 'wednesday' },
        { maintenanceWindowTime: '04:30' },
        { oidcEnabled: true },
        { pythonAnalysisEnabled: true },
      ];
      const results = await Promise.all(bodies.map((b) => putSettings(b, account)));
      expect(results.map((r) => r.status)).toEqual(bodies.map(() => 200));
      const res = await getSettings(account);
      expect(res.body).toEqual({
        auditLogEnabled: true,
        auditLogEnabledCurrent: true,
        auditLogEnabledTimestamp: expect.any(Number),
        hasSupportAccess: true,
        useAIBIUserInterface: true,
        maintenanceWindowEnabled: true,
        maintenanceWindowDay: 'wednesday',
        maintenanceWindowTime: '04:30',
        oidcEnabled: true,
        pythonAnalysisEnabled: true,
      });
      expect(res.body.auditLogEnabledTimestamp).toBeGreaterThan(0);
      expect(
        await t.sql(`SELECT 1 FROM tenant_settings WHERE account_id = $1`, [account.accountId]),
      ).toHaveLength(1);
    });

    it('is removed with its account', async () => {
      const account = await freshAccount();
      await putSettings({ oidcEnabled: true }, account);
      expect(await rowOf(account.accountId)).toBeDefined();
      await t.sql(`DELETE FROM accounts WHERE id = $1`, [account.accountId]);
      expect(await rowOf(account.accountId)).toBeUndefined();
    });
  });

  describe('GET /api/v1/app-config', () => {
    it('answers 401 without a token', async () => {
      const res = await t.http().get(APP_CONFIG);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('returns the defaults for an account that never saved any, without writing a row', async () => {
      const account = await freshAccount();
      const res = await getConfig(account);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(DEFAULT_APP_CONFIG);
      expect(await rowOf(account.accountId)).toBeUndefined();
    });

    it('is readable by every user of the account, including users without any role', async () => {
      const account = await freshAccount();
      const member = await newUser(t, account, { defaultRoles: [] });
      const saved = await putConfig({ sheetsUi: { showAppliedFilters: true } }, account);
      expect(saved.status).toBe(200);
      const res = await getConfig(member);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...DEFAULT_APP_CONFIG, sheetsUi: { showAppliedFilters: true } });
    });
  });

  describe('PUT /api/v1/app-config', () => {
    it('answers 401 without a token and 403 to non-admins, changing nothing', async () => {
      const before = (await getConfig()).body;
      const anon = await t.http().put(APP_CONFIG).send({ restrictDataDownload: true });
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      for (const actor of [viewer, noRole]) {
        const res = await putConfig({ restrictDataDownload: !before.restrictDataDownload }, actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect((await getConfig()).body).toEqual(before);
    });

    it('stores every field, nested objects included, and returns them', async () => {
      const account = await freshAccount();
      const res = await putConfig(FULL_APP_CONFIG, account);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(FULL_APP_CONFIG);
      expect((await getConfig(account)).body).toEqual(FULL_APP_CONFIG);
      const row = await rowOf(account.accountId);
      expect(row.app_theme).toEqual(FULL_APP_CONFIG.appTheme);
      expect(row.timezone_settings).toEqual(FULL_APP_CONFIG.timezoneSettings);
      expect(row.apply_theme_globally).toBe(true);
    });

    it('merges: omitted fields stay, null booleans stay, null objects are removed, objects are replaced', async () => {
      const account = await freshAccount();
      await putConfig(FULL_APP_CONFIG, account);
      const res = await putConfig(
        {
          applyThemeGlobally: null,
          restrictDataDownload: false,
          embedding: null,
          creatorMode: { workspaceTitle: 'Renamed' },
        },
        account,
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...FULL_APP_CONFIG,
        applyThemeGlobally: true,
        restrictDataDownload: false,
        embedding: null,
        creatorMode: { workspaceTitle: 'Renamed' },
      });
      expect((await getConfig(account)).body).toEqual(res.body);
    });

    it('does not touch the tenant settings, nor they the app config', async () => {
      const account = await freshAccount();
      await putSettings({ maintenanceWindowDay: 'saturday' }, account);
      await putConfig({ sheetsAgentChatEnabled: true }, account);
      await putSettings({ oidcEnabled: true }, account);
      expect((await getSettings(account)).body).toEqual({
        ...DEFAULT_SETTINGS,
        maintenanceWindowDay: 'saturday',
        oidcEnabled: true,
      });
      expect((await getConfig(account)).body).toEqual({
        ...DEFAULT_APP_CONFIG,
        sheetsAgentChatEnabled: true,
      });
    });

    it('refuses bad input at every level with 400 naming the field, changing nothing', async () => {
      const account = await freshAccount();
      await putConfig({ sheetsUi: { showAppliedFilters: false } }, account);
      const theme = FULL_APP_CONFIG.appTheme;
      const cases: Array<[unknown, string]> = [
        [{ timezoneSettings: { timezone: 'Mars/Olympus_Mons' } }, 'timezoneSettings.timezone'],
        [{ timezoneSettings: { timezone: 'Europe/Berlin ' } }, 'timezoneSettings.timezone'],
        [{ timezoneSettings: { timezone: '+02:00' } }, 'timezoneSettings.timezone'],
        [{ timezoneSettings: { timezone: '' } }, 'timezoneSettings.timezone'],
        [{ embedding: { timezone: 'Nowhere' } }, 'embedding.timezone'],
        [{ embedding: { locale: 'x'.repeat(36) } }, 'embedding.locale'],
        [{ embedding: { locale: 'en US' } }, 'embedding.locale'],
        [{ embedding: { showDashboardChat: 'yes' } }, 'embedding.showDashboardChat'],
        [{ creatorMode: { localizedTitles: [{ locale: 'y'.repeat(36), value: 'T' }] } }, 'locale'],
        [{ creatorMode: { localizedTitles: [{ locale: 'en' }] } }, 'value'],
        [
          {
            creatorMode: {
              localizedTitles: Array.from({ length: 51 }, (_, i) => ({ locale: 'en', value: `T${i}` })),
            },
          },
          'creatorMode.localizedTitles',
        ],
        [{ appTheme: { ...theme, logoUrl: 'http://cdn.acme.test/logo.svg' } }, 'appTheme.logoUrl'],
        [{ appTheme: { ...theme, logoUrl: 'javascript:alert(1)' } }, 'appTheme.logoUrl'],
        [{ appTheme: { ...theme, logoUrl: 'https://user:pw@cdn.acme.test/x.svg' } }, 'appTheme.logoUrl'],
        [{ appTheme: { ...theme, logoUrl: 'logo.svg' } }, 'appTheme.logoUrl'],
        [{ appTheme: { logoUrl: theme.logoUrl } }, 'appTheme.palette'],
        [{ appTheme: { palette: theme.palette } }, 'appTheme.logoUrl'],
        [{ appTheme: { ...theme, palette: { contrastLevel: 101 } } }, 'appTheme.palette.contrastLevel'],
        [{ appTheme: { ...theme, palette: { contrastLevel: -1 } } }, 'appTheme.palette.contrastLevel'],
        [{ appTheme: { ...theme, palette: { contrastLevel: '50' } } }, 'appTheme.palette.contrastLevel'],
        [{ appTheme: { ...theme, palette: { accent: { hue: 361 } } } }, 'appTheme.palette.accent.hue'],
        [
          { appTheme: { ...theme, palette: { accent: { color: 'red;}' } } } },
          'appTheme.palette.accent.color',
        ],
        [{ appTheme: { ...theme, palette: { surfaceMode: 'dark' } } }, 'appTheme.palette.surfaceMode'],
        [{ appTheme: { ...theme, palette: { glow: true } } }, 'appTheme.palette.glow'],
        [{ appTheme: { ...theme, palette: { accent: { shade: 1 } } } }, 'appTheme.palette.accent.shade'],
        [
          {
            appTheme: { ...theme, typography: { ...theme.typography, fonts: [{ id: 'x', format: 'woff' }] } },
          },
          'url',
        ],
        [
          {
            appTheme: {
              ...theme,
              typography: { ...theme.typography, body: { fontRef: 'inter', fontWeight: 0 } },
            },
          },
          'fontWeight',
        ],
        [{ appTheme: { ...theme, light: { accentColor: '#fff' } } }, 'appTheme.light'],
        [{ appTheme: 'dark' }, 'appTheme'],
        [{ sheetsUi: { showAppliedFilters: true, extra: 1 } }, 'sheetsUi.extra'],
        [{ applyThemeGlobally: 'true' }, 'applyThemeGlobally'],
        [{ brandColor: '#fff' }, 'brandColor'],
      ];
      for (const [body, field] of cases) {
        const res = await putConfig(body, account);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(Array.isArray(res.body.message)).toBe(true);
        expect({ body, message: JSON.stringify(res.body.message).includes(field) }).toEqual({
          body,
          message: true,
        });
      }
      expect((await getConfig(account)).body).toEqual({
        ...DEFAULT_APP_CONFIG,
        sheetsUi: { showAppliedFilters: false },
      });
    });

    it('accepts time-zone names of the IANA database, such as UTC and Etc/GMT+5', async () => {
      const account = await freshAccount();
      for (const timezone of ['UTC', 'Etc/GMT+5', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata']) {
        const res = await putConfig({ timezoneSettings: { timezone } }, account);
        expect({ timezone, status: res.status }).toEqual({ timezone, status: 200 });
        expect(res.body.timezoneSettings).toEqual({ timezone });
      }
    });

    it('keeps accounts apart', async () => {
      const res = await putConfig({ restrictDataDownload: true, sheetsUi: { showAppliedFilters: true } });
      expect(res.status).toBe(200);
      expect((await getConfig(other)).body).toEqual(DEFAULT_APP_CONFIG);
    });

    it('loses nothing when different fields and the tenant settings are saved in parallel', async () => {
      const account = await freshAccount();
      const requests = [
        putConfig({ appTheme: FULL_APP_CONFIG.appTheme }, account),
        putConfig({ applyThemeGlobally: true }, account),
        putConfig({ creatorMode: FULL_APP_CONFIG.creatorMode }, account),
        putConfig({ embedding: FULL_APP_CONFIG.embedding }, account),
        putConfig({ restrictDataDownload: true }, account),
        putConfig({ sheetsAgentChatEnabled: true }, account),
        putConfig({ sheetsUi: FULL_APP_CONFIG.sheetsUi }, account),
        putConfig({ timezoneSettings: FULL_APP_CONFIG.timezoneSettings }, account),
        putSettings({ auditLogEnabled: true }, account),
        putSettings({ maintenanceWindowTime: '05:15' }, account),
      ];
      const results = await Promise.all(requests);
      expect(results.map((r) => r.status)).toEqual(requests.map(() => 200));
      expect((await getConfig(account)).body).toEqual(FULL_APP_CONFIG);
      expect((await getSettings(account)).body).toMatchObject({
        auditLogEnabled: true,
        maintenanceWindowTime: '05:15',
      });
    });
  });
});
