package kernel

import "golang.org/x/sys/cpu"

// detect returns the best level the processor (and the operating system,
// which must save the vector registers) runs: the extensions each level's
// functions require, as vec_amd64.s lists them (TestRequires).
func detect() level {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512DQ && x.HasAVX512VL && x.HasBMI2 && x.HasAVX2 && x.HasFMA && x.HasF16C:
		return avx512
	case x.HasAVX2 && x.HasFMA && x.HasF16C:
		return avx2
	}
	return portable
}

func setVector(l level) {
	switch l {
	case avx512:
		lanes = 16
		expRowV, addWeightedV, powRowsV, powRowsBoundV = expRow512, addWeighted512, powRows512, powRowsBound512
		sigmoidsV, pnormRowV, transposeV, sqRowsBoundV = sigmoids512, pnormRow512, transposeBlock512, sqRowsBound512
		gemmTileV, maxAbsV, gradRowV, subRows64V, screenMaskV = gemmTile512, maxAbs512, gradRow512, subRows64512, screenMask512
		normSmallFwdV, normSmallBwdV, expSmallV, addSmallV = normSmallFwd512, normSmallBwd512, expSmall512, addSmall512
		sqHalfV, powHalfV, powByteV, prefetchV, powRowsAncV = sqHalf512, powHalf512, powByte512, prefetch512, powRowsAnchor512
		mulDivV, normSmallScoreV, addWidenV = mulDiv512, normSmallScore512, addWiden512
		log64V, exp64V, sub32V, absDiv64V = log64512, exp64512, sub32512, absDiv64512
		dotMT64V, solveLower64V, rankTile64V = dotMT64512, solveLower64512, rankTile64512
		trsmUpperT64V, trsmLowerT64V, gemmSub64V = trsmUpperT64512, trsmLowerT64512, gemmSub64512
		dotMTRows64V, sqDistParts64V = dotMTRows64512, sqDistParts64256 // one form: four float64 lanes
		if x := cpu.X86; x.HasAVX512BW && x.HasAVX512VBMI {
			lutByteV = lutByte512
		}
	case avx2:
		lanes = 8
		expRowV, addWeightedV, powRowsV, powRowsBoundV = expRow256, addWeighted256, powRows256, powRowsBound256
		sigmoidsV, pnormRowV, transposeV, sqRowsBoundV = sigmoids256, pnormRow256, transposeBlock256, sqRowsBound256
		gemmTileV, maxAbsV, gradRowV, subRows64V, screenMaskV = gemmTile256, maxAbs256, gradRow256, subRows64256, screenMask256
		normSmallFwdV, normSmallBwdV, expSmallV, addSmallV = normSmallFwd256, normSmallBwd256, expSmall256, addSmall256
		sqHalfV, powHalfV, powByteV, prefetchV, powRowsAncV = sqHalf256, powHalf256, powByte256, prefetch256, powRowsAnchor256
		mulDivV, normSmallScoreV, addWidenV = mulDiv256, normSmallScore256, addWiden256
		log64V, exp64V, sub32V, absDiv64V = log64256, exp64256, sub32256, absDiv64256
		dotMT64V, solveLower64V, rankTile64V = dotMT64256, solveLower64256, rankTile64256
		trsmUpperT64V, trsmLowerT64V, gemmSub64V = trsmUpperT64256, trsmLowerT64256, gemmSub64256
		dotMTRows64V, sqDistParts64V = dotMTRows64256, sqDistParts64256
	}
}
