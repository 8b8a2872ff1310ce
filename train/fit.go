package train

import (
	"context"
	"fmt"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
)

// MaxHeadWiden bounds a head's outputs: at most this many times the
// embeddings' dimension (a wider head's extra outputs hold nothing the
// embeddings fill, and a typo's head would exhaust memory).
const MaxHeadWiden = 4

// Spec says what Fit learns.
type Spec struct {
	// Kind is the learnable family (geometry.LearnableKinds): the
	// single-norm or the generalized ball.
	Kind geometry.Kind
	// Head, when true, trains a linear projection head jointly with the set
	// (InfoNCE, docs/design.md §4): HeadDim outputs (0: the embeddings'
	// dimension), initialised at the identity; Config.InfoNCE configures its
	// loss (nil: PaperInfoNCE). Without a head Config.InfoNCE is ignored.
	Head    bool
	HeadDim int
	// Shift, when true, centres the sets at anchor + c, c the fit split's
	// mean offset of positive − anchor (bundle.MeanOffset): the geometry
	// is trained on the shifted differences and returned as
	// geometry.Shifted. For anchors and positives from two encoders.
	Shift bool
	// Config is the recipe, with this run's objective, α and seed.
	Config Config
}

// Fitted is a learned geometry, not yet calibrated.
type Fitted struct {
	// Geometry is the best checkpoint, behind its projection head when it
	// was trained with one: what a set calibrates and scores with.
	Geometry geometry.Geometry
	// Result is the training run's account.
	Result *Result
	// Info is what a set file keeps of the training (the whole recipe and
	// its outcome).
	Info *conformal.FitInfo
}

// Set is the fitted geometry as a set without a threshold, with its
// training's record: what ccs fit writes, and what
// conformal.CalibrateFitted calibrates (refusing a calibration split the
// geometry was fitted or validated on, which conformal.Calibrate on the
// bare geometry cannot know).
func (f *Fitted) Set() *conformal.Set { return conformal.Uncalibrated(f.Geometry, f.Info) }

// Fit is the pipeline every learned set goes through: the paper's initial
// geometry (geometry.Initial), trained on fit with the checkpoint chosen on val
// (TrainHead, with a head when s asks for one), wrapped for calibration.
// The calibration split is never given to it.
func Fit(ctx context.Context, s Spec, fit, val *bundle.Bundle, obs Observer) (*Fitted, error) {
	if fit == nil || val == nil {
		return nil, fmt.Errorf("train: a training and a validation split are needed (bundle.HoldOut holds a share of the training anchors out for validation)")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := fit.NeedPositives(); err != nil {
		return nil, fmt.Errorf("train: fit: %w", err)
	}
	if err := val.NeedPositives(); err != nil {
		return nil, fmt.Errorf("train: validation: %w", err)
	}
	fitDigest, valDigest := fit.Digest(), val.Digest()
	if fitDigest == valDigest {
		return nil, fmt.Errorf("train: the validation split is the training split: the checkpoint would be chosen on the rows it was trained on; give the bundles' val split (or hold out a share of the training anchors)")
	}
	dim := fit.D
	if s.Head && s.HeadDim > 0 && s.HeadDim <= MaxHeadWiden*fit.D {
		dim = s.HeadDim
	}
	if s.HeadDim < 0 || (s.HeadDim > 0 && !s.Head) {
		return nil, fmt.Errorf("train: head dimension %d without a head, or negative", s.HeadDim)
	}
	if s.HeadDim > MaxHeadWiden*fit.D {
		// A typo (-head-dim 100000) would allocate the head and the
		// projected splits until memory ran out.
		return nil, fmt.Errorf("train: a head of %d outputs over %d-dimensional embeddings: at most %d (%d× their dimension; the embeddings fill only a %d-dimensional slice of a wider head's output)",
			s.HeadDim, fit.D, MaxHeadWiden*fit.D, MaxHeadWiden, fit.D)
	}
	g, init, err := geometry.Initial(s.Kind, dim)
	if err != nil {
		return nil, err
	}
	cfg := s.Config
	cfg.Init = init
	var h *head.Linear
	if s.Head {
		h = head.Identity(fit.D, dim)
		if cfg.InfoNCE == nil {
			cfg.InfoNCE = &InfoNCE{}
		}
		if dim != fit.D && !cfg.InfoNCE.ProjectedVolume {
			// A head that is not square has its volume term in the
			// projected space whatever was asked (the backbone's has no
			// finite one): recorded as such, not as the backbone's.
			n := *cfg.InfoNCE
			n.ProjectedVolume = true
			cfg.InfoNCE = &n
		}
	} else {
		cfg.InfoNCE = nil
	}
	trainOn, selectOn := fit, val
	var shift []float64
	if s.Shift {
		if shift, err = bundle.MeanOffset(fit); err != nil {
			return nil, fmt.Errorf("train: fit: %w", err)
		}
		if trainOn, err = fit.Shifted(shift); err != nil {
			return nil, err
		}
		if selectOn, err = val.Shifted(shift); err != nil {
			return nil, fmt.Errorf("train: validation: %w", err)
		}
	}
	res, err := TrainHead(ctx, g, h, trainOn, selectOn, cfg, obs)
	if err != nil {
		return nil, err
	}
	f := &Fitted{Geometry: g, Result: res, Info: FitInfo(cfg, res, fit.N, val.N)}
	f.Info.Splits = map[string]string{"fit": fitDigest, "validation": valDigest}
	f.Info.Seen = bundle.NewRowFilter(fit, val)
	f.Info.Sources, f.Info.Embeddings = conformal.SourcesOf(fit, val)
	if h != nil {
		if f.Geometry, err = head.NewProjected(h, g); err != nil {
			return nil, err
		}
	}
	if shift != nil {
		if f.Geometry, err = geometry.NewShifted(f.Geometry, shift); err != nil {
			return nil, err
		}
	}
	return f, nil
}
