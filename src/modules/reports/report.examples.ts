import { bodyExamples } from '../../core/openapi/api-body-examples.js';
import {
  ConnectReportDto,
  CreateReportDto,
  DisconnectReportDto,
  RefreshReportDto,
  UpdateReportDto,
} from './dto/report.dto.js';

const ORDERS_BY_STATUS = JSON.stringify({ measures: ['orders.count'], dimensions: ['orders.status'] });
const SPREADSHEET_ID = '1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789aBcDeF';

export const CREATE_REPORT_EXAMPLES = bodyExamples(CreateReportDto, {
  sheets: {
    summary: 'A report made in Google Sheets, in a folder',
    value: {
      name: 'Orders by status',
      title: 'Orders by status',
      description: 'Open and completed orders, refreshed daily',
      jsonQuery: ORDERS_BY_STATUS,
      source: 'GOOGLE_SHEETS',
      folderId: 7,
      publicId: 'OrdStatus001',
    },
  },
  sql: {
    summary: 'A SQL report at the root',
    value: {
      name: 'Revenue by month',
      sqlQuery: "SELECT date_trunc('month', created_at) AS month, sum(amount) FROM orders GROUP BY 1",
      source: 'PLAYGROUND',
    },
  },
});

export const UPSERT_REPORT_EXAMPLES = bodyExamples(CreateReportDto, {
  upsert: {
    summary: 'Create or update the report with this public id',
    value: { name: 'Orders by status', jsonQuery: ORDERS_BY_STATUS, source: 'EXCEL' },
  },
});

export const UPDATE_REPORT_EXAMPLES = bodyExamples(UpdateReportDto, {
  query: {
    summary: 'Change the query, only if nobody changed the report since version 3',
    value: { jsonQuery: ORDERS_BY_STATUS, expectedVersion: 3 },
  },
  move: { summary: 'Move into a workbook', value: { workbookId: 42 } },
});

export const CONNECT_REPORT_EXAMPLES = bodyExamples(ConnectReportDto, {
  sheets: {
    summary: 'Place the result in a Google Sheets range',
    value: {
      externalWorkbookId: SPREADSHEET_ID,
      resultLocation: "'Q3 plan'!B3:F40",
      sheetId: '0',
      host: 'GOOGLE_SHEETS',
      workbookName: 'Q3 plan',
    },
  },
  excel: {
    summary: 'Place it in an Excel workbook by anchor cell',
    value: {
      externalWorkbookId: '01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K',
      resultLocation: 'Budget!A1',
      sheetName: 'Budget',
      anchorCell: 'A1',
      host: 'EXCEL',
    },
  },
});

export const DISCONNECT_REPORT_EXAMPLES = bodyExamples(DisconnectReportDto, {
  byAnchor: {
    summary: 'The placement at a sheet and anchor cell',
    value: { externalWorkbookId: SPREADSHEET_ID, sheetName: 'Q3 plan', anchorCell: 'B3' },
  },
  byId: {
    summary: 'The placement with this id',
    value: { placementId: '3f0c9d1e-8a52-4a8e-9a0b-6f1d2c3b4a59' },
  },
});

export const REFRESH_REPORT_EXAMPLES = bodyExamples(RefreshReportDto, {
  byLocation: {
    summary: 'The placement at this range',
    value: { externalWorkbookId: SPREADSHEET_ID, resultLocation: "'Q3 plan'!B3:F40" },
  },
});
