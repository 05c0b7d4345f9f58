import { useMutation } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { Link } from 'react-router';
import { ApiError } from '../lib/api';
import { supabase } from '../lib/supabase';
import { ErrorNote } from '../ui/ErrorNote';
import { Field } from '../ui/Field';
import { AuthLayout } from './AuthLayout';

type Form = { email: string; password: string };

export function SignUp() {
  const { register, handleSubmit } = useForm<Form>();
  const signUp = useMutation({
    mutationFn: async (f: Form) => {
      const { data, error } = await supabase.auth.signUp(f);
      if (error) throw new ApiError(error.message);
      return data.session ? 'signed-in' : 'confirm';
    },
  });
  if (signUp.data === 'confirm') {
    return (
      <AuthLayout title="Check your email">
        <p>We sent a link to confirm your address. Open it to finish signing up.</p>
      </AuthLayout>
    );
  }
  return (
    <AuthLayout title="Create your account">
      <form onSubmit={handleSubmit((f) => signUp.mutate(f))}>
        <Field label="Email" type="email" autoComplete="email" required {...register('email')} />
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          hint="At least 8 characters"
          required
          {...register('password')}
        />
        <ErrorNote error={signUp.error} />
        <button type="submit" className="primary" disabled={signUp.isPending}>
          Create account
        </button>
      </form>
      <p>
        Already have an account? <Link to="/app/sign-in">Sign in</Link>
      </p>
    </AuthLayout>
  );
}
