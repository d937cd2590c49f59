import { ApiProperty } from '@nestjs/swagger';
import { BoolField, EnumField, NestedField, StringField } from '../../../core/http/validation.js';
import { HttpsUrlField, NumberField, TimeZoneField } from './fields.js';

/** CSS colours as clients write them: `#1f6feb`, `rgb(31 111 235)`, `hsl(...)`, `teal`. */
const COLOR = /^[#A-Za-z0-9(),.% /-]{1,64}$/;
const COLOR_MESSAGE = '$property must be a CSS colour (at most 64 characters)';
/** BCP 47 tags are letters, digits and hyphens; `_` is accepted as a separator too. */
const LOCALE = /^[A-Za-z0-9_-]+$/;
const LOCALE_MESSAGE = '$property must be a locale tag such as en-US';

export const SURFACE_MODES = ['neutral', 'tinted'] as const;

export class AppThemePaletteSeedDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 64,
    pattern: COLOR,
    patternMessage: COLOR_MESSAGE,
  })
  color?: string | null;
  @NumberField({ optional: true, nullable: true, min: 0, max: 360 }) hue?: number | null;
  @NumberField({ optional: true, nullable: true, min: 0, max: 100 }) saturation?: number | null;
}

export class AppThemeCodePaletteDto {
  @NumberField({ optional: true, nullable: true, min: 0, max: 100 }) saturation?: number | null;
}

export class AppThemePaletteThemesDto {
  @NestedField(() => AppThemeCodePaletteDto, { optional: true, nullable: true })
  code?: AppThemeCodePaletteDto | null;
  @NestedField(() => AppThemePaletteSeedDto, { optional: true, nullable: true })
  danger?: AppThemePaletteSeedDto | null;
  @NestedField(() => AppThemePaletteSeedDto, { optional: true, nullable: true })
  note?: AppThemePaletteSeedDto | null;
  @NestedField(() => AppThemePaletteSeedDto, { optional: true, nullable: true })
  success?: AppThemePaletteSeedDto | null;
  @NestedField(() => AppThemePaletteSeedDto, { optional: true, nullable: true })
  warning?: AppThemePaletteSeedDto | null;
}

export class AppThemePaletteDto {
  @NestedField(() => AppThemePaletteSeedDto, { optional: true, nullable: true })
  accent?: AppThemePaletteSeedDto | null;
  @NestedField(() => AppThemePaletteSeedDto, { optional: true, nullable: true })
  base?: AppThemePaletteSeedDto | null;
  @NumberField({ optional: true, nullable: true, min: 0, max: 100 }) contrastLevel?: number | null;
  @BoolField({ optional: true, nullable: true }) pastel?: boolean | null;
  @EnumField(SURFACE_MODES, { optional: true, nullable: true, enumName: 'AppThemeSurfaceMode' })
  surfaceMode?: (typeof SURFACE_MODES)[number] | null;
  @NestedField(() => AppThemePaletteThemesDto, { optional: true, nullable: true })
  themes?: AppThemePaletteThemesDto | null;
}

/** The colour scheme of the older theme format. */
export class AppThemeSchemeDto {
  @StringField({ maxLength: 64, pattern: COLOR, patternMessage: COLOR_MESSAGE }) accentColor: string;
  @StringField({ maxLength: 64, pattern: COLOR, patternMessage: COLOR_MESSAGE }) backgroundColor: string;
  @StringField({ maxLength: 64, pattern: COLOR, patternMessage: COLOR_MESSAGE }) foregroundColor: string;
  @NumberField({ min: 0, max: 100 }) contrast: number;
  @HttpsUrlField() logoUrl: string;
}

export class ThemeFontDto {
  @StringField({ minLength: 1, maxLength: 100 }) id: string;
  @HttpsUrlField({ description: 'Where the font file is served (https)' }) url: string;
  @StringField({ minLength: 1, maxLength: 32, example: 'woff2' }) format: string;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) family?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) name?: string | null;
}

export class AppThemeFontRefDto {
  @StringField({ minLength: 1, maxLength: 100, description: 'The `id` of one of `fonts`' }) fontRef: string;
  @NumberField({ min: 1, max: 1000 }) fontWeight: number;
}

export class AppThemeTypographyDto {
  @NestedField(() => ThemeFontDto, { isArray: true, maxItems: 20 }) fonts: ThemeFontDto[];
  @NestedField(() => AppThemeFontRefDto) body: AppThemeFontRefDto;
  @NestedField(() => AppThemeFontRefDto) heading: AppThemeFontRefDto;
}

export class AppThemeDto {
  @NestedField(() => AppThemePaletteDto) palette: AppThemePaletteDto;
  @HttpsUrlField({ description: 'Logo shown by client apps (https)' }) logoUrl: string;
  @NestedField(() => AppThemeSchemeDto, {
    optional: true,
    deprecated: true,
    description: 'Older format; use palette and logoUrl',
  })
  light?: AppThemeSchemeDto;
  @NestedField(() => AppThemeSchemeDto, {
    optional: true,
    deprecated: true,
    description: 'Older format; use palette and logoUrl',
  })
  dark?: AppThemeSchemeDto;
  @NestedField(() => AppThemeTypographyDto, { optional: true, nullable: true })
  typography?: AppThemeTypographyDto | null;
}

export class LocalizedValueDto {
  @StringField({ minLength: 1, maxLength: 35, pattern: LOCALE, patternMessage: LOCALE_MESSAGE })
  locale: string;
  @StringField({ maxLength: 1000 }) value: string;
}

export class CreatorModeDto {
  @NestedField(() => LocalizedValueDto, { optional: true, nullable: true, isArray: true, maxItems: 50 })
  localizedTitles?: LocalizedValueDto[] | null;
  @BoolField({ optional: true, nullable: true }) showGeneratedSql?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showSemanticSql?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showWorkspaceTitle?: boolean | null;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) workspaceTitle?: string | null;
}

export class EmbedSettingsDto {
  @BoolField({ optional: true, nullable: true }) allowAi?: boolean | null;
  @BoolField({ optional: true, nullable: true }) enableDashboardComments?: boolean | null;
  @StringField({
    optional: true,
    nullable: true,
    minLength: 1,
    maxLength: 35,
    pattern: LOCALE,
    patternMessage: LOCALE_MESSAGE,
    example: 'en-US',
  })
  locale?: string | null;
  @BoolField({ optional: true, nullable: true }) showAiWidgets?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showDashboardChat?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showWorkbookChat?: boolean | null;
  @TimeZoneField({ optional: true, nullable: true }) timezone?: string | null;
}

export class SheetsUiSettingsDto {
  @BoolField({ optional: true, nullable: true }) showAppliedFilters?: boolean | null;
}

export class TimezoneSettingsDto {
  @BoolField({ optional: true, nullable: true }) allowUserOverride?: boolean | null;
  @BoolField({ optional: true, nullable: true }) enabled?: boolean | null;
  @TimeZoneField({ optional: true, nullable: true }) timezone?: string | null;
}

const OBJECT_NOTE = 'Replaces the stored object as a whole; null removes it';
const BOOL_NOTE = 'Omitted or null leaves it unchanged';

/** PUT /app-config: every field optional; omitted fields are left alone. */
export class AppConfigInputDto {
  @NestedField(() => AppThemeDto, { optional: true, nullable: true, description: OBJECT_NOTE })
  appTheme?: AppThemeDto | null;
  @BoolField({ optional: true, nullable: true, description: BOOL_NOTE }) applyThemeGlobally?: boolean | null;
  @NestedField(() => CreatorModeDto, { optional: true, nullable: true, description: OBJECT_NOTE })
  creatorMode?: CreatorModeDto | null;
  @NestedField(() => EmbedSettingsDto, { optional: true, nullable: true, description: OBJECT_NOTE })
  embedding?: EmbedSettingsDto | null;
  @BoolField({ optional: true, nullable: true, description: BOOL_NOTE }) restrictDataDownload?:
    boolean | null;
  @BoolField({ optional: true, nullable: true, description: BOOL_NOTE }) sheetsAgentChatEnabled?:
    boolean | null;
  @NestedField(() => SheetsUiSettingsDto, { optional: true, nullable: true, description: OBJECT_NOTE })
  sheetsUi?: SheetsUiSettingsDto | null;
  @NestedField(() => TimezoneSettingsDto, { optional: true, nullable: true, description: OBJECT_NOTE })
  timezoneSettings?: TimezoneSettingsDto | null;
}

export class AppConfigDto {
  @ApiProperty({ type: AppThemeDto, nullable: true }) appTheme: AppThemeDto | null;
  @ApiProperty() applyThemeGlobally: boolean;
  @ApiProperty({ type: CreatorModeDto, nullable: true }) creatorMode: CreatorModeDto | null;
  @ApiProperty({ type: EmbedSettingsDto, nullable: true }) embedding: EmbedSettingsDto | null;
  @ApiProperty() restrictDataDownload: boolean;
  @ApiProperty() sheetsAgentChatEnabled: boolean;
  @ApiProperty({ type: SheetsUiSettingsDto, nullable: true }) sheetsUi: SheetsUiSettingsDto | null;
  @ApiProperty({ type: TimezoneSettingsDto, nullable: true }) timezoneSettings: TimezoneSettingsDto | null;
}
