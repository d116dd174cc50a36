package schedplugin

// SetSyncCheck makes every cycle compare the cluster the plugin followed
// with the one it would build, and hand the outcome to f (nil: stop).
func SetSyncCheck(f func(error)) { checkSync = f }
