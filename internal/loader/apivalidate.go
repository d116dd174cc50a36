package loader

import (
	"encoding/json"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
	"k8s.io/kubernetes/pkg/features"
	volumevalidation "k8s.io/kubernetes/pkg/volume/validation"
)

// validateAPI applies to obj, read and defaulted, kube-apiserver's own
// validation of it on create (what each kind's registry strategy's
// Validate calls), on the internal type the registered conversions give:
// the resource.k8s.io kinds (a ResourceClaim's status too, as its first
// status update: validateClaimStatus) and the storage kinds. Other kinds
// are not checked here. The validation reads the process's feature gate,
// which is at v1.37.2's defaults while the loader reads (the upstream
// adapter sets gates only for the duration of a decision).
//
// Left out, as the API server does them outside validation or not on
// create: the admission checks (DRAAdminAccess's namespace label, the
// authorization of status writes), dropping the fields of disabled
// gates (PrepareForCreate; the scheduler reads what the dump holds), and
// declarative validation (rest.DeclarativeValidation, whose rules the
// handwritten validation still holds at v1.37.2, marked
// MarkCoveredByDeclarative).
func validateAPI(obj runtime.Object) error {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *resourcev1.ResourceClaim:
		in := &resource.ResourceClaim{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = corevalidation.ValidateObjectMeta(&in.ObjectMeta, true, corevalidation.ValidateResourceClaimName, field.NewPath("metadata"))
		errs = append(errs, claimSpecErrors(&o.Spec, in)...)
		errs = append(errs, validateClaimStatus(in)...)
	case *resourcev1.ResourceClaimTemplate:
		in := &resource.ResourceClaimTemplate{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = resourcevalidation.ValidateResourceClaimTemplate(in)
	case *resourcev1.ResourceSlice:
		in := &resource.ResourceSlice{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = resourcevalidation.ValidateResourceSlice(in)
	case *resourcev1.DeviceClass:
		in := &resource.DeviceClass{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = resourcevalidation.ValidateDeviceClass(in)
	case *resourcev1.DeviceTaintRule:
		in := &resource.DeviceTaintRule{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = resourcevalidation.ValidateDeviceTaintRule(in)
	case *v1.PersistentVolumeClaim:
		in := &core.PersistentVolumeClaim{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = corevalidation.ValidatePersistentVolumeClaim(in, corevalidation.ValidationOptionsForPersistentVolumeClaim(in, nil))
	case *v1.PersistentVolume:
		in := &core.PersistentVolume{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = corevalidation.ValidatePersistentVolume(in, corevalidation.ValidationOptionsForPersistentVolume(in, nil))
		errs = append(errs, volumevalidation.ValidatePersistentVolume(in)...)
	case *storagev1.StorageClass:
		in := &storage.StorageClass{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = storagevalidation.ValidateStorageClass(in)
	case *storagev1.CSINode:
		in := &storage.CSINode{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = storagevalidation.ValidateCSINode(in)
	case *storagev1.CSIDriver:
		in := &storage.CSIDriver{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = storagevalidation.ValidateCSIDriver(in)
	case *storagev1.VolumeAttachment:
		in := &storage.VolumeAttachment{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = storagevalidation.ValidateVolumeAttachment(in)
	case *storagev1.CSIStorageCapacity:
		in := &storage.CSIStorageCapacity{}
		if err := convert(o, in); err != nil {
			return err
		}
		errs = storagevalidation.ValidateCSIStorageCapacity(in, storagevalidation.CSIStorageCapacityValidateOptions{})
	default:
		return nil
	}
	return errs.ToAggregate()
}

// convert converts a v1 object to its internal type, as the API server
// does before it validates.
func convert(in, out runtime.Object) error {
	return legacyscheme.Scheme.Convert(in, out, nil)
}

// validateClaimStatus validates a claim's status as the API server
// validates the status update that wrote it (ValidateResourceClaimStatusUpdate):
// onto the claim as it was created, without a status. The write is taken
// as made before any deletion (a deleted claim's reservedFor was written
// while it lived), and the resource version the update requires is
// supplied when the dump has none. A claim without status is not checked.
func validateClaimStatus(in *resource.ResourceClaim) field.ErrorList {
	if in.Status.Allocation == nil && len(in.Status.ReservedFor) == 0 && len(in.Status.Devices) == 0 {
		return nil
	}
	written := *in
	written.DeletionTimestamp, written.DeletionGracePeriodSeconds = nil, nil
	if written.ResourceVersion == "" {
		written.ResourceVersion = "1"
	}
	created := written
	created.Status = resource.ResourceClaimStatus{}
	return resourcevalidation.ValidateResourceClaimStatusUpdate(&written, &created)
}

// claimSpecErrors is what ValidateResourceClaim says of in's spec (spec,
// the v1 form): upstream's ValidateResourceClaim is ValidateObjectMeta
// and the spec's validation, and the spec's, which compiles every CEL
// selector (half a millisecond a claim), is memoized by the spec's JSON
// and the gates it reads: a workload's claims, made from one template,
// share one spec.
func claimSpecErrors(spec *resourcev1.ResourceClaimSpec, in *resource.ResourceClaim) field.ErrorList {
	b, err := json.Marshal(spec)
	if err != nil {
		return specOnly(in)
	}
	key := gateKey() + string(b)
	claimSpecMemo.Lock()
	errs, ok := claimSpecMemo.m[key]
	claimSpecMemo.Unlock()
	if ok {
		return errs
	}
	errs = specOnly(in)
	claimSpecMemo.Lock()
	if claimSpecMemo.m == nil || len(claimSpecMemo.m) >= 1024 {
		claimSpecMemo.m = map[string]field.ErrorList{}
	}
	claimSpecMemo.m[key] = errs
	claimSpecMemo.Unlock()
	return errs
}

var claimSpecMemo struct {
	sync.Mutex
	m map[string]field.ErrorList
}

// specOnly is ValidateResourceClaim's errors of in's spec: its own, on
// in with metadata that validates.
func specOnly(in *resource.ResourceClaim) field.ErrorList {
	return resourcevalidation.ValidateResourceClaim(&resource.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "default"},
		Spec:       in.Spec,
	})
}

// gateKey is the gates the resource.k8s.io validation reads, as the
// process's feature gate has them now.
func gateKey() string {
	key := []byte("---:")
	for i, g := range []featuregate.Feature{features.DRAConsumableCapacity, features.DRAListTypeAttributes, features.DRAFractionalCapacityRange} {
		if utilfeature.DefaultFeatureGate.Enabled(g) {
			key[i] = '+'
		}
	}
	return string(key)
}
