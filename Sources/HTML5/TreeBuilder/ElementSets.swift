// Element categories and name tables of the tree-construction stage (§13.2.4, §13.2.6.5).

enum ElementSets {
    // .address, .applet, .area, .article, .aside, .base, .basefont, .bgsound, .blockquote, .body,
    // .br, .button, .caption, .center, .col, .colgroup, .dd, .details, .dir, .div, .dl, .dt,
    // .embed, .fieldset, .figcaption, .figure, .footer, .form, .frame, .frameset, .h1, .h2, .h3,
    // .h4, .h5, .h6, .head, .header, .hgroup, .hr, .html, .iframe, .img, .input, .keygen, .li,
    // .link, .listing, .main, .marquee, .menu, .meta, .nav, .noembed, .noframes, .noscript,
    // .object, .ol, .p, .param, .plaintext, .pre, .script, .search, .section, .select, .source,
    // .style, .summary, .table, .tbody, .td, .template, .textarea, .tfoot, .th, .thead, .title,
    // .tr, .track, .ul, .wbr, .xmp
    static let special = HTMLTagSet(words: 0xBFFFBAF299BC99F0, 0xA847802B1F259E46, 0x000000000003277F, 0x0000000000000000)
    // .a, .b, .big, .code, .em, .font, .i, .nobr, .s, .small, .strike, .strong, .tt, .u
    static let formatting = HTMLTagSet(words: 0x4000410004010402, 0x0620200000800000, 0x0000000000001800, 0x0000000000000000)
    // .dd, .dt, .li, .optgroup, .option, .p, .rb, .rp, .rt, .rtc
    static let impliedEnd = HTMLTagSet(words: 0x0000008080000000, 0x00000F0160000200, 0x0000000000000000, 0x0000000000000000)
    // .caption, .colgroup, .dd, .dt, .li, .optgroup, .option, .p, .rb, .rp, .rt, .rtc, .tbody, .td,
    // .tfoot, .th, .thead, .tr
    static let impliedEndThorough = HTMLTagSet(words: 0x0000008090800000, 0x00000F0160000200, 0x0000000000000273, 0x0000000000000000)
    // .applet, .caption, .html, .table, .td, .th, .marquee, .object, .template
    static let defaultScope = HTMLTagSet(words: 0x2000000000800020, 0x8000000008008000, 0x0000000000000026, 0x0000000000000000)
    // .h1, .h2, .h3, .h4, .h5, .h6
    static let headings = HTMLTagSet(words: 0x01F8000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000)

    static func isSpecial<E: TreeElement>(_ element: E) -> Bool { isSpecial(namespace: element.namespace, tag: element.tag) }

    /// ``isSpecial(_:)`` on an element's namespace and interned name.
    @inline(__always) static func isSpecial(namespace: Namespace, tag: HTMLTag) -> Bool {
        switch namespace {
        case .html: return special.contains(tag)
        case .mathml:
            switch tag { case .mi, .mo, .mn, .ms, .mtext, .annotationXml: return true; default: return false }
        case .svg:
            switch tag { case .foreignObject, .desc, .title: return true; default: return false }
        }
    }

    // .b, .big, .blockquote, .body, .br, .center, .code, .dd, .div, .dl, .dt, .em, .embed, .h1,
    // .h2, .h3, .h4, .h5, .h6, .head, .hr, .i, .img, .li, .listing, .menu, .meta, .nobr, .ol, .p,
    // .pre, .ruby, .s, .small, .span, .strong, .strike, .sub, .sup, .table, .tt, .u, .ul, .var
    static let breakoutTags = HTMLTagSet(words: 0x53F803E0851D0400, 0xD720302110850A02, 0x0000000000007800, 0x0000000000000000)

    static let svgTagNames: [String: String] = [
        "altglyph": "altGlyph", "altglyphdef": "altGlyphDef", "altglyphitem": "altGlyphItem", "animatecolor": "animateColor",
        "animatemotion": "animateMotion", "animatetransform": "animateTransform", "clippath": "clipPath", "feblend": "feBlend",
        "fecolormatrix": "feColorMatrix", "fecomponenttransfer": "feComponentTransfer", "fecomposite": "feComposite",
        "feconvolvematrix": "feConvolveMatrix", "fediffuselighting": "feDiffuseLighting", "fedisplacementmap": "feDisplacementMap",
        "fedistantlight": "feDistantLight", "fedropshadow": "feDropShadow", "feflood": "feFlood", "fefunca": "feFuncA",
        "fefuncb": "feFuncB", "fefuncg": "feFuncG", "fefuncr": "feFuncR", "fegaussianblur": "feGaussianBlur", "feimage": "feImage",
        "femerge": "feMerge", "femergenode": "feMergeNode", "femorphology": "feMorphology", "feoffset": "feOffset",
        "fepointlight": "fePointLight", "fespecularlighting": "feSpecularLighting", "fespotlight": "feSpotLight", "fetile": "feTile",
        "feturbulence": "feTurbulence", "foreignobject": "foreignObject", "glyphref": "glyphRef", "lineargradient": "linearGradient",
        "radialgradient": "radialGradient", "textpath": "textPath",
    ]

    static let svgAttributeNames: [String: String] = [
        "attributename": "attributeName", "attributetype": "attributeType", "basefrequency": "baseFrequency",
        "baseprofile": "baseProfile", "calcmode": "calcMode", "clippathunits": "clipPathUnits", "diffuseconstant": "diffuseConstant",
        "edgemode": "edgeMode", "filterunits": "filterUnits", "glyphref": "glyphRef", "gradienttransform": "gradientTransform",
        "gradientunits": "gradientUnits", "kernelmatrix": "kernelMatrix", "kernelunitlength": "kernelUnitLength",
        "keypoints": "keyPoints", "keysplines": "keySplines", "keytimes": "keyTimes", "lengthadjust": "lengthAdjust",
        "limitingconeangle": "limitingConeAngle", "markerheight": "markerHeight", "markerunits": "markerUnits",
        "markerwidth": "markerWidth", "maskcontentunits": "maskContentUnits", "maskunits": "maskUnits", "numoctaves": "numOctaves",
        "pathlength": "pathLength", "patterncontentunits": "patternContentUnits", "patterntransform": "patternTransform",
        "patternunits": "patternUnits", "pointsatx": "pointsAtX", "pointsaty": "pointsAtY", "pointsatz": "pointsAtZ",
        "preservealpha": "preserveAlpha", "preserveaspectratio": "preserveAspectRatio", "primitiveunits": "primitiveUnits",
        "refx": "refX", "refy": "refY", "repeatcount": "repeatCount", "repeatdur": "repeatDur",
        "requiredextensions": "requiredExtensions", "requiredfeatures": "requiredFeatures", "specularconstant": "specularConstant",
        "specularexponent": "specularExponent", "spreadmethod": "spreadMethod", "startoffset": "startOffset",
        "stddeviation": "stdDeviation", "stitchtiles": "stitchTiles", "surfacescale": "surfaceScale",
        "systemlanguage": "systemLanguage", "tablevalues": "tableValues", "targetx": "targetX", "targety": "targetY",
        "textlength": "textLength", "viewbox": "viewBox", "viewtarget": "viewTarget", "xchannelselector": "xChannelSelector",
        "ychannelselector": "yChannelSelector", "zoomandpan": "zoomAndPan",
    ]

    static let foreignAttributes: [String: (AttributeNamespace, String)] = [
        "xlink:actuate": (.xlink, "actuate"), "xlink:arcrole": (.xlink, "arcrole"), "xlink:href": (.xlink, "href"),
        "xlink:role": (.xlink, "role"), "xlink:show": (.xlink, "show"), "xlink:title": (.xlink, "title"),
        "xlink:type": (.xlink, "type"), "xml:lang": (.xml, "lang"), "xml:space": (.xml, "space"),
        "xmlns": (.xmlns, "xmlns"), "xmlns:xlink": (.xmlns, "xlink"),
    ]

    static let quirkyPublicPrefixes: [String] = [
        "+//silmaril//dtd html pro v0r11 19970101//", "-//as//dtd html 3.0 aswedit + extensions//",
        "-//advasoft ltd//dtd html 3.0 aswedit + extensions//", "-//ietf//dtd html 2.0 level 1//",
        "-//ietf//dtd html 2.0 level 2//", "-//ietf//dtd html 2.0 strict level 1//", "-//ietf//dtd html 2.0 strict level 2//",
        "-//ietf//dtd html 2.0 strict//", "-//ietf//dtd html 2.0//", "-//ietf//dtd html 2.1e//", "-//ietf//dtd html 3.0//",
        "-//ietf//dtd html 3.2 final//", "-//ietf//dtd html 3.2//", "-//ietf//dtd html 3//", "-//ietf//dtd html level 0//",
        "-//ietf//dtd html level 1//", "-//ietf//dtd html level 2//", "-//ietf//dtd html level 3//",
        "-//ietf//dtd html strict level 0//", "-//ietf//dtd html strict level 1//", "-//ietf//dtd html strict level 2//",
        "-//ietf//dtd html strict level 3//", "-//ietf//dtd html strict//", "-//ietf//dtd html//",
        "-//metrius//dtd metrius presentational//", "-//microsoft//dtd internet explorer 2.0 html strict//",
        "-//microsoft//dtd internet explorer 2.0 html//", "-//microsoft//dtd internet explorer 2.0 tables//",
        "-//microsoft//dtd internet explorer 3.0 html strict//", "-//microsoft//dtd internet explorer 3.0 html//",
        "-//microsoft//dtd internet explorer 3.0 tables//", "-//netscape comm. corp.//dtd html//",
        "-//netscape comm. corp.//dtd strict html//", "-//o'reilly and associates//dtd html 2.0//",
        "-//o'reilly and associates//dtd html extended 1.0//", "-//o'reilly and associates//dtd html extended relaxed 1.0//",
        "-//sq//dtd html 2.0 hotmetal + extensions//",
        "-//softquad software//dtd hotmetal pro 6.0::19990601::extensions to html 4.0//",
        "-//softquad//dtd hotmetal pro 4.0::19971010::extensions to html 4.0//", "-//spyglass//dtd html 2.0 extended//",
        "-//sun microsystems corp.//dtd hotjava html//", "-//sun microsystems corp.//dtd hotjava strict html//",
        "-//w3c//dtd html 3 1995-03-24//", "-//w3c//dtd html 3.2 draft//", "-//w3c//dtd html 3.2 final//",
        "-//w3c//dtd html 3.2//", "-//w3c//dtd html 3.2s draft//", "-//w3c//dtd html 4.0 frameset//",
        "-//w3c//dtd html 4.0 transitional//", "-//w3c//dtd html experimental 19960712//",
        "-//w3c//dtd html experimental 970421//", "-//w3c//dtd w3 html//", "-//w3o//dtd w3 html 3.0//",
        "-//webtechs//dtd mozilla html 2.0//", "-//webtechs//dtd mozilla html//",
    ]
}
