import {
  Action,
  actionsGranting,
  actionsGrantingThrough,
  ALL_ACTIONS,
  expandActions,
  inheritedActions,
} from '../../src/core/auth/action.js';

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

  describe('inheritance through containers', () => {
    it('a folder grant gives content inside the same level of its own type', () => {
      const given = inheritedActions('Folder', 'Report', expandActions([Action.FolderEdit]));
      expect(given.has(Action.ReportEdit)).toBe(true);
      expect(given.has(Action.ReportRead)).toBe(true);
      expect(given.has(Action.ReportManage)).toBe(false);
    });

    it('a report action granted on a folder applies to its reports as is', () => {
      const given = inheritedActions('Folder', 'Report', expandActions([Action.ReportManage]));
      expect(given.has(Action.ReportManage)).toBe(true);
      expect(given.has(Action.FolderRead)).toBe(false);
    });

    it('a workbook grant reaches its reports, level by level', () => {
      const given = inheritedActions('Workbook', 'Report', expandActions([Action.WorkbookRead]));
      expect(given.has(Action.ReportRead)).toBe(true);
      expect(given.has(Action.ReportEdit)).toBe(false);
    });

    it('a grant on a resource of the same type is not translated', () => {
      expect([...inheritedActions('Report', 'Report', expandActions([Action.ReportRead]))]).toEqual([
        Action.ReportRead,
      ]);
    });

    it('lists the container actions that grant an action on content inside', () => {
      expect(actionsGrantingThrough('Folder', 'Report', Action.ReportEdit).sort()).toEqual(
        [Action.All, Action.FolderEdit, Action.FolderManage, Action.ReportEdit, Action.ReportManage].sort(),
      );
    });
  });
});
