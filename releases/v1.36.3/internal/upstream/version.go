package upstream

// Version is the release of k8s.io/kubernetes this package runs, the one
// go.mod pins (TestVersionIsTheModules checks the two agree): the only
// place the project writes it. Everything that prints or checks the
// upstream release reads it; scripts ask `go list -m k8s.io/kubernetes`.
const Version = "v1.36.3"

// StagingVersion is the version of the k8s.io staging modules (k8s.io/api,
// apimachinery, client-go, ...) that match Version: v1.X.Y is v0.X.Y.
func StagingVersion() string { return "v0" + Version[2:] }
