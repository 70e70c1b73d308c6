// The TPM 2.0 Software Stack (tpm2-tss: ESYS, TCTI loader, marshaling, response-code decoding),
// as used by the HardwareKeys module. Debian: libtss2-dev. The small inline helpers below fill
// the C unions of TPM templates, which Swift imports awkwardly; all TPM logic stays in Swift.
#ifndef RAMPART_CTSS2_SHIM_H
#define RAMPART_CTSS2_SHIM_H

#include <string.h>
#include <stdint.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

/// Overwrites `length` bytes at `pointer` with zeros (not elided by the optimizer).
static inline void rampart_tpm_zero(void *pointer, size_t length) {
    volatile unsigned char *p = (volatile unsigned char *)pointer;
    while (length--) { *p++ = 0; }
}

/// The storage primary key template: ECC NIST P-256, AES-128-CFB, restricted decryption key,
/// empty unique field. Deterministic: the same owner seed always gives the same key, so it is
/// recreated on every use instead of being made persistent (TCG "SRK" template, ECC variant).
static inline void rampart_tpm_storage_primary_template(TPM2B_PUBLIC *out) {
    memset(out, 0, sizeof(*out));
    out->publicArea.type = TPM2_ALG_ECC;
    out->publicArea.nameAlg = TPM2_ALG_SHA256;
    out->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA
        | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
    out->publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    out->publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
    out->publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    out->publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    out->publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    out->publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

/// A sealed data object template (keyedhash, no sign/decrypt): fixedTPM and fixedParent, so
/// it can never be duplicated to another TPM; userWithAuth; noDA only when `dictionaryAttackExempt`.
static inline void rampart_tpm_sealed_object_template(TPM2B_PUBLIC *out, int dictionaryAttackExempt) {
    memset(out, 0, sizeof(*out));
    out->publicArea.type = TPM2_ALG_KEYEDHASH;
    out->publicArea.nameAlg = TPM2_ALG_SHA256;
    out->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        | TPMA_OBJECT_USERWITHAUTH | (dictionaryAttackExempt ? TPMA_OBJECT_NODA : 0);
    out->publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
}

/// Reads a sealed object's attributes (to check an envelope's object is what we expect).
static inline uint32_t rampart_tpm_object_attributes(const TPM2B_PUBLIC *in) {
    return in->publicArea.objectAttributes;
}

static inline uint16_t rampart_tpm_object_type(const TPM2B_PUBLIC *in) {
    return in->publicArea.type;
}

/// Fills the sensitive part of a new object: authorization value and sealed data.
/// Returns 0, or -1 if a length exceeds the TPM buffer.
static inline int rampart_tpm_sensitive_create(TPM2B_SENSITIVE_CREATE *out,
                                               const uint8_t *auth, size_t authLength,
                                               const uint8_t *data, size_t dataLength) {
    memset(out, 0, sizeof(*out));
    if (authLength > sizeof(out->sensitive.userAuth.buffer)) return -1;
    if (dataLength > sizeof(out->sensitive.data.buffer)) return -1;
    if (authLength > 0) memcpy(out->sensitive.userAuth.buffer, auth, authLength);
    out->sensitive.userAuth.size = (UINT16)authLength;
    if (dataLength > 0) memcpy(out->sensitive.data.buffer, data, dataLength);
    out->sensitive.data.size = (UINT16)dataLength;
    return 0;
}

/// Fills an authorization value. Returns 0, or -1 if too long.
static inline int rampart_tpm_auth(TPM2B_AUTH *out, const uint8_t *auth, size_t length) {
    memset(out, 0, sizeof(*out));
    if (length > sizeof(out->buffer)) return -1;
    if (length > 0) memcpy(out->buffer, auth, length);
    out->size = (UINT16)length;
    return 0;
}

/// Copies unsealed data into `out` (capacity `capacity`); returns its length, or -1.
static inline long rampart_tpm_sensitive_data_copy(const TPM2B_SENSITIVE_DATA *in, uint8_t *out, size_t capacity) {
    if (in->size > capacity || in->size > sizeof(in->buffer)) return -1;
    memcpy(out, in->buffer, in->size);
    return (long)in->size;
}

/// Parameter-encryption algorithm of the salted sessions: AES-128-CFB.
static inline void rampart_tpm_session_symmetric(TPMT_SYM_DEF *out) {
    memset(out, 0, sizeof(*out));
    out->algorithm = TPM2_ALG_AES;
    out->keyBits.aes = 128;
    out->mode.aes = TPM2_ALG_CFB;
}

/// Reads one TPM property (TPM2_CAP_TPM_PROPERTIES). `found` is set to 0 when absent.
static inline TSS2_RC rampart_tpm_property(ESYS_CONTEXT *context, uint32_t property, uint32_t *value, int *found) {
    TPMS_CAPABILITY_DATA *data = NULL;
    TPMI_YES_NO more = 0;
    *found = 0;
    TSS2_RC rc = Esys_GetCapability(context, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                    TPM2_CAP_TPM_PROPERTIES, property, 1, &more, &data);
    if (rc != TSS2_RC_SUCCESS) return rc;
    for (UINT32 i = 0; i < data->data.tpmProperties.count && i < TPM2_MAX_TPM_PROPERTIES; i++) {
        if (data->data.tpmProperties.tpmProperty[i].property == property) {
            *value = data->data.tpmProperties.tpmProperty[i].value;
            *found = 1;
        }
    }
    Esys_Free(data);
    return TSS2_RC_SUCCESS;
}

#endif
