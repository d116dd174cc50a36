package upstream

// Version (seams.go, seams_v1_*.go) is the release of k8s.io/kubernetes
// this package is built against: preempt.CurrentRelease by default, an
// earlier release under that release's build tag (preempt.ReleaseTable),
// in the module releases/VERSION that pins it. TestVersionIsTheModules and
// package releases' TestModulesPinTheirRelease check the go.mod files
// agree. Everything that prints or checks the upstream release reads it;
// scripts ask `go list -m k8s.io/kubernetes`.

// StagingVersion is the version of the k8s.io staging modules (k8s.io/api,
// apimachinery, client-go, ...) that match Version: v1.X.Y is v0.X.Y.
func StagingVersion() string { return "v0" + Version[2:] }
