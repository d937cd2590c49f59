import { Action, actionsGranting, ALL_ACTIONS, expandActions } from '../../src/core/auth/action.js';

describe('role actions', () => {
  it('All grants every action', () => {
    expect(expandActions([Action.All]).size).toBe(ALL_ACTIONS.length);
  });

  it('Manage implies Edit implies Read', () => {
    expect([...expandActions([Action.ReportManage])].sort()).toEqual(
      [Action.ReportManage, Action.ReportEdit, Action.ReportRead].sort(),
    );
    expect(expandActions([Action.FolderRead]).has(Action.FolderEdit)).toBe(false);
  });

  it('ignores names that are not actions', () => {
    expect(expandActions(['NotAnAction']).size).toBe(0);
  });

  it('lists every action that grants a given one', () => {
    expect(actionsGranting(Action.WorkbookRead).sort()).toEqual(
      [Action.All, Action.WorkbookManage, Action.WorkbookEdit, Action.WorkbookRead].sort(),
    );
  });
});
