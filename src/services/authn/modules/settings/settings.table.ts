export interface SettingsTable {
  name: string
  value: string
}
