interface SettingsTable {
  name: string
  value: string
}

/** The tables this module owns. */
export interface SettingsTables {
  authn_settings: SettingsTable
}
